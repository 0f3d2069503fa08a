// ZoneInfo: the system's time zone, read from tzdata's files (`TZ`, /etc/localtime,
// /usr/share/zoneinfo), for the daemon, blockc and the agent alike. BlockCore's Zone does the
// arithmetic; this target only reads the files.
//
// May import: BlockCore, FoundationEssentials
