// BlockBus: D-Bus through libsystemd's sd-bus (CSystemd), for the two programs that speak it:
// the agent (notifications on the session bus, logind's idle and lock hints for the browser's
// host) and the daemon (logind's sessions, for screen time). A thin, typed wrapper: calls,
// signal matches, the few readers and writers those need; it decides nothing.
//
// May import: CSystemd, Glibc
