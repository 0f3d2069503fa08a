// BlockDaemon: blockd's edges. It owns the engine's queue and everything that touches the
// machine: the control socket and its clients (Server/), the state directory and the
// configuration's files (State/), the enforcers that carry out what BlockCore decided
// (Enforcement/: the hosts file, the app shield, "felt at once", browser policies, per-user
// tables), the engine that runs BlockCore's `Core` on one queue and carries out its effects,
// with the timer and clocks (Engine/), logind's login sessions for screen time (Sessions/), and
// the process itself: flags, journald, sd_notify, hooks (Main/). Decisions belong in BlockCore;
// what is here reads, writes and waits.
//
// May import: BlockBus, BlockCore, ZoneInfo, CLinux, CSystemd, CNftables, Dispatch, FoundationEssentials, Glibc, Synchronization
