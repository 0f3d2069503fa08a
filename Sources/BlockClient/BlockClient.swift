// BlockClient: blockc (`BlockcMain`, what the one executable runs under that name). It owns
// the command line and its help, the connection to blockd, and what a person or a script
// reads back (text, `--json`, `report --html`). It does not use libsystemd: `watch --notify`
// execs blockc-agent (BlockAgent) instead.
//
// May import: BlockCore, ZoneInfo, Dispatch, FoundationEssentials, Glibc
