import BlockCore
import Glibc

/// Chromium's and Firefox's native-messaging framing: each message is a 4-byte length in the
/// machine's own byte order, then that many bytes of UTF-8 JSON, in both directions.
enum NativeFraming {
    /// The browsers refuse a message to the extension over 1 MB.
    static let maxToBrowser = 1 << 20
    /// The browsers allow 64 MiB towards the host; nothing the extension sends comes near
    /// 1 MiB, so more is bad input rather than something to buffer.
    static let maxFromBrowser = 1 << 20

    /// One message, framed; nil when it is over what the browser takes.
    static func encode(_ message: JSONObject) -> [UInt8]? {
        var body: [UInt8] = []
        JSON.object(message).serialize(into: &body)
        guard body.count <= maxToBrowser else { return nil }
        return withUnsafeBytes(of: UInt32(body.count)) { Array($0) } + body
    }

    /// One frame from the browser: a JSON object, or why the frame was not one. Only a
    /// frame's length can break the stream; a frame that is not JSON is skipped whole.
    enum Frame: Equatable {
        case message(JSONObject)
        case invalid(String)
    }

    /// Reads frames from what stdin delivers, in whatever pieces it comes.
    struct Reader {
        private var buffer: [UInt8] = []

        /// Bytes received and not yet part of a whole frame.
        var pending: Int { buffer.count }

        mutating func feed(_ bytes: some Collection<UInt8>) { buffer.append(contentsOf: bytes) }

        /// The next whole frame, or nil until more bytes come.
        mutating func next() throws(AgentError) -> Frame? {
            guard buffer.count >= 4 else { return nil }
            let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
            guard length <= NativeFraming.maxFromBrowser else { throw .frameTooLong(length) }
            guard buffer.count >= 4 + length else { return nil }
            let body = Array(buffer[4..<(4 + length)])
            buffer.removeSubrange(0..<(4 + length))
            guard case .object(let o)? = try? JSON.parse(bytes: body) else {
                return .invalid("the browser sent a message that is not a JSON object (\(length) bytes); skipped it")
            }
            return .message(o)
        }

        /// At end of input: fine between frames, an error inside one (a short header too).
        func finish() throws(AgentError) {
            guard !buffer.isEmpty else { return }
            let want = buffer.count >= 4 ? 4 + Int(buffer.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }) : 4
            throw .frameCutShort(have: buffer.count, want: want)
        }
    }
}
