#pragma once

// DPDK's headers, included once for the capture backend's files. They are C for C compilers:
// they trip -Wconversion, -Wpedantic and -Wshadow in their inline functions, so only their own
// lines are exempted; the code that includes this keeps every warning.

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wdeprecated-volatile"
#endif
#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_version.h>
#pragma GCC diagnostic pop
