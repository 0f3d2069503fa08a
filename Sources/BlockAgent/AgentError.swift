/// The agent's one error type: a failure at one of its edges, said one way (the bus's are
/// BlockBus's `BusError`). The programs it starts, the focus it reads (R1), the daemon it asks and, as the
/// native-messaging host, the browser (B1) each have a case; every message says what failed.
enum AgentError: Error, Equatable, CustomStringConvertible {
    /// A program the agent starts (the URL opener) could not be started.
    case spawn(String)
    /// This session cannot tell which window has the focus (R1), and why.
    case noFocus(String)
    /// blockd refuses the subscription until the next login (not in group blockd): the agent
    /// gives up for good.
    case permission(String)
    /// blockd cannot be reached, or refused a request, and what it said.
    case unreachable
    case refused(String)
    /// B1: a frame from the browser over what the host takes; the stream cannot be trusted after it.
    case frameTooLong(Int)
    /// B1: the browser closed stdin in the middle of a frame.
    case frameCutShort(have: Int, want: Int)
    /// B1: a whole frame that is not a JSON object, or not a message the host knows (skipped).
    case badMessage(String)

    var description: String {
        switch self {
        case .spawn(let why), .noFocus(let why), .permission(let why), .refused(let why), .badMessage(let why): why
        case .unreachable: "blockd cannot be reached"
        case .frameTooLong(let n):
            "the browser sent a message of \(n) bytes; the host takes at most \(NativeFraming.maxFromBrowser) (1 MiB); stopping"
        case .frameCutShort(let have, let want):
            "the browser closed its end in the middle of a message (\(have) of \(want) bytes); stopping"
        }
    }
}
