#pragma once

// The kernel's autogroups (sched_autogroup_enabled, Debian's default): every session (setsid) is
// a scheduling group, and the groups share the CPUs equally whatever their processes' nice; nice
// weighs a process only against the others of its session. A daemon is a session of its own,
// so its nice alone does not put it ahead of a busy process of another session: the group's own
// nice, /proc/self/autogroup, does.

namespace rocehil {

// Sets the nice of the calling process's session group to `nice` when the process leads its
// session (a daemon after setsid, a command sshd started): the group is then its own, not its
// caller's. True when set; false when not the leader, when this kernel has no autogroups, or
// when it may not be raised (not root): nice alone then decides.
bool set_session_group_nice(int nice) noexcept;

}  // namespace rocehil
