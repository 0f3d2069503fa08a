// BlockCore: what blockd decides, as pure functions of their inputs (STYLE: decide in the
// core, act at the edge). It owns the decisions themselves (Core/: `Core`, one value that
// takes requests, time and what enforcement achieved, and returns effects for the daemon to
// carry out), the model (selections, blocks, schedules, limits, more time), the rules over
// time (Time/: civil dates, zones, DURATION and TIME), who may do what (Authority/), the
// configuration's files as text (Config/), the control protocol and its JSON (Wire/), names,
// addresses and the bytes enforcement writes (Web/), the usage ledger and the report
// (Reports/), and the texts people read (Text/).
// It reads no clock (an instant is always a parameter), does no I/O and starts nothing;
// PurityTests keeps it so.
//
// May import: FoundationEssentials
