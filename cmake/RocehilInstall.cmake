# Install rules (cmake --install, any prefix) and the Debian package (make package: CPack's DEB
# generator). CPack rather than debhelper: the package is made from these same install rules, so
# the .deb and a plain `cmake --install --prefix DIR` cannot disagree, and no debian/ source
# package has to be kept in step with CMake.
#
# Two packages: rocehil (everything but DPDK) and rocehil-dpdk (the DPDK capture backend,
# librocehil-dpdk.so, which rocehil loads at run time). A traffic host or a pcap capture host
# installs rocehil alone and gets none of DPDK's forty-odd libraries; a capture server that reads
# a mirror port with DPDK adds rocehil-dpdk. A package split over a run-time loaded module rather
# than instead of one: the binary must not need DPDK to start, and only a module loaded on demand
# gives that; the split gives each package its own dpkg-shlibdeps Depends.
include(GNUInstallDirs)
set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME rocehil)

install(TARGETS rocehil RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES suites/smoke.yaml suites/acceptance.yaml suites/rehearsal.yaml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/rocehil/suites)
install(FILES docs/examples/fabric.yaml DESTINATION ${CMAKE_INSTALL_DATADIR}/rocehil/examples)
# The README's links name docs/PAGE.md: the pages keep that place under the package's doc folder.
file(GLOB rocehil_doc_pages ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${rocehil_doc_pages} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# The manual page and the bash completion come from the built binary's own command tree
# ('rocehil man-page', 'rocehil completion bash'), so they cannot drift from its --help. The
# date honours SOURCE_DATE_EPOCH, so a rebuild of the same tree makes the same page.
string(TIMESTAMP ROCEHIL_MANUAL_DATE "%Y-%m-%d" UTC)
string(TIMESTAMP ROCEHIL_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
set(manual_dir ${PROJECT_BINARY_DIR}/manual)
add_custom_command(
  OUTPUT ${manual_dir}/rocehil.1.gz ${manual_dir}/rocehil.bash
  COMMAND ${CMAKE_COMMAND} -E make_directory ${manual_dir}
  COMMAND sh -c "\"$1\" man-page --date \"$2\" | gzip -9n > \"$3\"" sh $<TARGET_FILE:rocehil>
          ${ROCEHIL_MANUAL_DATE} ${manual_dir}/rocehil.1.gz
  COMMAND sh -c "\"$1\" completion bash > \"$2\"" sh $<TARGET_FILE:rocehil>
          ${manual_dir}/rocehil.bash
  DEPENDS rocehil
  COMMENT "rocehil(1) and the bash completion, from the command tree"
  VERBATIM)
add_custom_target(rocehil_manual ALL DEPENDS ${manual_dir}/rocehil.1.gz ${manual_dir}/rocehil.bash)
install(FILES ${manual_dir}/rocehil.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${manual_dir}/rocehil.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME rocehil)

# What Debian policy asks of every package's doc directory: the copyright, and a changelog.
configure_file(packaging/changelog.in ${manual_dir}/changelog @ONLY)
add_custom_command(
  OUTPUT ${manual_dir}/changelog.gz
  COMMAND sh -c "gzip -9n < \"$1\" > \"$2\"" sh ${manual_dir}/changelog ${manual_dir}/changelog.gz
  DEPENDS ${manual_dir}/changelog
  VERBATIM)
add_custom_target(rocehil_changelog ALL DEPENDS ${manual_dir}/changelog.gz)
install(FILES packaging/copyright ${manual_dir}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The DPDK backend, where the loader looks for it (ROCEHIL_MODULE_DIR, relative to BINDIR).
if(TARGET rocehil_dpdk)
  install(TARGETS rocehil_dpdk LIBRARY DESTINATION ${ROCEHIL_MODULE_DIR} COMPONENT dpdk)
  install(FILES packaging/copyright ${manual_dir}/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/rocehil-dpdk COMPONENT dpdk)
  set(rocehil_components rocehil dpdk)
else()
  set(rocehil_components rocehil)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${rocehil_components})
set(CPACK_PACKAGE_NAME rocehil)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "rocehil developers <rocehil@example.org>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # rocehil_VERSION_amd64.deb, rocehil-dpdk_VERSION_amd64.deb
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.org/rocehil")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends on libraries from dpkg-shlibdeps
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
# Each package's description starts with its own synopsis line (so no package-wide summary, which
# CPack would put above both).
set(CPACK_DEBIAN_ROCEHIL_PACKAGE_NAME rocehil)
set(CPACK_DEBIAN_ROCEHIL_PACKAGE_SECTION net)
set(CPACK_DEBIAN_ROCEHIL_DESCRIPTION
    "qualify RoCEv2 fabrics for GPU training clusters
rocehil deploys verbs traffic agents to GPU hosts over SSH, reproduces
collective communication patterns with many queue pairs per connection,
captures CNP and PFC frames from switch mirror ports and grades the fabric
against the thresholds of a suite, with JSON, JUnit and HTML reports and a
run history for comparisons and bisection.
.
Capture from a DPDK port needs the rocehil-dpdk package as well.")
# The programs it runs, by hand (dpkg-shlibdeps sees only libraries).
set(CPACK_DEBIAN_ROCEHIL_PACKAGE_DEPENDS "openssh-client")
set(CPACK_DEBIAN_ROCEHIL_PACKAGE_RECOMMENDS "perftest, iproute2")
set(CPACK_DEBIAN_ROCEHIL_PACKAGE_SUGGESTS
    "rocehil-dpdk, tcpdump, tshark, nftables, openssh-server")
set(CPACK_DEBIAN_DPDK_PACKAGE_NAME rocehil-dpdk)
set(CPACK_DEBIAN_DPDK_PACKAGE_SECTION net)
set(CPACK_DEBIAN_DPDK_DESCRIPTION
    "DPDK capture backend for rocehil
rocehil loads this module when a capture reads a switch mirror port with
DPDK (a NIC by PCI address, or a virtual device such as net_af_packet or
net_pcap) instead of libpcap. It brings DPDK's libraries; hosts that only
run traffic or capture with libpcap do not need it.")
# The module is loaded by the rocehil binary of exactly its build.
set(CPACK_DEBIAN_DPDK_PACKAGE_DEPENDS "rocehil (= ${PROJECT_VERSION})")
include(CPack)

# The package made, linted, installed with apt, used, and removed (as root; SERIAL: it installs
# /usr/bin/rocehil, which nothing else running may see come and go).
rocehil_add_system_test(package packaging/tests/package_test.py ARGS ${PROJECT_BINARY_DIR}
                        TIMEOUT 600 SERIAL)
