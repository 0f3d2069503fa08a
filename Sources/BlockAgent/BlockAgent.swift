// BlockAgent: blockc-agent, the notification agent in a user's session (`AgentMain`, what the
// one executable runs under that name). It owns the event
// subscriber, the notifications over the session bus (sd-bus), their buttons, the focused
// window's app (R1) and the weekly summary (R3); run as blockd-nm-host, it is the browser
// extension's native-messaging host, which reports the focused tab's site to blockd (B1). It
// asks blockd; it decides nothing blockd holds.
//
// May import: BlockBus, BlockClient, BlockCore, ZoneInfo, CSystemd, Dispatch, FoundationEssentials, Glibc, Synchronization
