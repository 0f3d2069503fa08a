@testable import BlockDaemon
import Dispatch
import Foundation
import Testing

/// T9: what other threads tell the engine arrives in order and is never dropped; what code on
/// the engine's own queue tells it (the timer's wake) is handled at once, not after a second
/// trip through the queue behind other work.
@Suite("T9: the engine's inbox")
struct EngineInboxTests {
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var words: [String] = []
        func add(_ message: EngineInbox.Message) {
            let word: String
            switch message {
            case .wake: word = "wake"
            case .enforcementChanged: word = "enforcementChanged"
            default: word = "other"
            }
            lock.withLock { words.append(word) }
        }
        var all: [String] { lock.withLock { words } }
    }

    @Test("T9: a wake posted from the engine's queue is handled before postHere returns, after what was already waiting")
    func postHere() {
        let inbox = EngineInbox()
        let seen = Seen()
        inbox.open { seen.add($0) }
        inbox.queue.sync {}  // the open's own delivery has run
        inbox.queue.sync {
            inbox.post(.enforcementChanged)  // from "another thread": waits for the queue
            #expect(seen.all.isEmpty)
            inbox.postHere(.wake)
            #expect(seen.all == ["enforcementChanged", "wake"], "handled at once, in order")
        }
        inbox.queue.sync {}  // the queued delivery of the first post finds nothing left
        #expect(seen.all == ["enforcementChanged", "wake"])
    }

    @Test("T9: messages posted before the engine opens the inbox wait, in order, and are all delivered")
    func beforeOpen() {
        let inbox = EngineInbox()
        let seen = Seen()
        inbox.queue.sync { inbox.postHere(.wake) }
        inbox.post(.enforcementChanged)
        inbox.queue.sync {}
        #expect(seen.all.isEmpty)
        inbox.open { seen.add($0) }
        inbox.queue.sync {}
        #expect(seen.all == ["wake", "enforcementChanged"])
    }
}
