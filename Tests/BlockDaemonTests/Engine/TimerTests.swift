import BlockCore
import Dispatch
import Foundation
import Glibc
import Testing
import BlockTestSupport
import ZoneInfo
@testable import BlockDaemon
import BlockTestTools

/// The real timerfd and inotify plumbing (T7, T9). These need real time to pass, briefly.
@Suite("Timers and the time-zone watcher")
struct TimerTests {
    final class Flag: @unchecked Sendable {
        let lock = NSLock()
        var times: [Date] = []
        func hit() { lock.withLock { times.append(Date()) } }
        var count: Int { lock.withLock { times.count } }
    }

    @Test("T9: the boot-clock timer fires once, at the armed instant, and can be re-armed or disarmed")
    func fires() throws {
        let queue = DispatchQueue(label: "t")
        let flag = Flag()
        let timer = try TransitionTimer(clock: RealClock(), queue: queue) { flag.hit() }
        let due = Date().addingTimeInterval(0.2)
        queue.sync { timer.arm(due) }
        #expect(Run.eventually(timeout: 5) { flag.count == 1 })
        let fired = try #require(flag.lock.withLock { flag.times.first })
        #expect(fired >= due.addingTimeInterval(-0.001), "not early")
        queue.sync { timer.arm(Date().addingTimeInterval(0.2)) }
        queue.sync { timer.arm(nil) }
        // The barrier: a second timer on the same queue, due after the disarmed deadline. Had the
        // first one still fired, its wake-up would have been handled before the witness's.
        let witness = Flag()
        let after = try TransitionTimer(clock: RealClock(), queue: queue) { witness.hit() }
        queue.sync { after.arm(Date().addingTimeInterval(0.4)) }
        #expect(Run.eventually(timeout: 5) { witness.count == 1 })
        #expect(flag.count == 1, "a disarmed timer stays quiet")
        queue.sync { timer.arm(Date().addingTimeInterval(-5)) }
        #expect(Run.eventually(timeout: 5) { flag.count == 2 }, "a deadline in the past fires at once")
    }

    @Test("T7: replacing the localtime link (as timedatectl does, by rename) is noticed")
    func timeZoneChange() throws {
        let s = Sandbox()
        let link = s.dir + "/localtime"
        #expect(symlink("/usr/share/zoneinfo/Asia/Tokyo", link) == 0)
        let flag = Flag()
        let queue = DispatchQueue(label: "tz")
        let watcher = TimeZoneWatcher(path: link, queue: queue) { flag.hit() }
        #expect(watcher != nil)
        // Unrelated files in the same directory do not count. The barrier: the watcher has read
        // the directory's events (inotify queued them when the file was written), and the
        // handler that read them has returned.
        s.write("x", to: "other")
        #expect(Run.eventually(timeout: 5) { FileEvents.allRead(in: s.dir) })
        queue.sync {}
        #expect(flag.count == 0)
        #expect(symlink("/usr/share/zoneinfo/Europe/Berlin", s.dir + "/localtime.new") == 0)
        #expect(rename(s.dir + "/localtime.new", link) == 0)
        #expect(Run.eventually(timeout: 5) { flag.count >= 1 })
        let zone = SystemTimeZone.current(environment: [:], localtime: link)
        #expect(zone.identifier == "Europe/Berlin")
        withExtendedLifetime(watcher) {}
    }

    @Test("SystemTimeZone: TZ wins, then the localtime link, then UTC")
    func systemZone() {
        #expect(SystemTimeZone.current(environment: ["TZ": "America/New_York"], localtime: "/nonexistent").identifier == "America/New_York")
        #expect(SystemTimeZone.current(environment: ["TZ": ":Europe/Berlin"], localtime: "/nonexistent").identifier == "Europe/Berlin")
        let fallback = SystemTimeZone.current(environment: [:], localtime: "/nonexistent").identifier
        #expect(!fallback.isEmpty)
    }
}

@Suite("Inotify event records")
struct InotifyDecodeTests {
    /// A `struct inotify_event` as the kernel writes it: wd, mask, cookie, len, padded name.
    static func record(wd: Int32, name: String, padTo: Int = 16) -> [UInt8] {
        var name = Array(name.utf8)
        if !name.isEmpty { name += [UInt8](repeating: 0, count: padTo - name.count % padTo) }
        var out: [UInt8] = []
        for field in [UInt32(bitPattern: wd), 0x100, 0, UInt32(name.count)] { withUnsafeBytes(of: field) { out += $0 } }
        return out + name
    }

    @Test("records are decoded with their watch and NUL-padded name; a record cut short is not read", arguments: [
        ("one file event, no name", record(wd: 3, name: ""), [Inotify.Event(watch: 3, name: "")]),
        ("two directory events", record(wd: 1, name: "hosts") + record(wd: 2, name: "localtime"),
         [Inotify.Event(watch: 1, name: "hosts"), Inotify.Event(watch: 2, name: "localtime")]),
        ("a name of exactly the padding", record(wd: 5, name: "0123456789abcdef"), [Inotify.Event(watch: 5, name: "0123456789abcdef")]),
        ("a header cut short", Array(record(wd: 1, name: "hosts") + record(wd: 9, name: "x").prefix(10)),
         [Inotify.Event(watch: 1, name: "hosts")]),
    ])
    func decode(_ name: String, _ bytes: [UInt8], _ expected: [Inotify.Event]) {
        #expect(Inotify.decode(bytes[...]) == expected, "\(name)")
    }
}

/// T6: a thread held up between reading the two clocks is not a step of the wall clock.
@Suite("T6: the two clocks read as one instant")
struct ObservedClockTests {
    /// A clock on which the thread is held up for `pause` seconds right after its first read
    /// (of either clock), once: every read after it sees the time that passed meanwhile.
    final class Paused: SystemClock, @unchecked Sendable {
        var wall = Date(timeIntervalSince1970: 1_800_000_000), boot: TimeInterval = 1000, reads = 0
        let pause: TimeInterval
        init(pause: TimeInterval) { self.pause = pause }
        func read<T>(_ value: T) -> T {
            reads += 1
            if reads == 1 { (wall, boot) = (wall + pause, boot + pause) }
            return value
        }
        func wallNow() -> Date { read(wall) }
        func bootNow() -> TimeInterval { read(boot) }
    }

    @Test("read one after the other, as before, a pause between the two reads looks like a step (what the test below guards against)")
    func naive() {
        let clock = Paused(pause: 2)
        let before = clock.wall.timeIntervalSince1970 - clock.boot
        let wall = clock.wallNow(), boot = clock.bootNow()
        #expect(abs((wall.timeIntervalSince1970 - boot) - before + 2) < 0.001)
    }

    @Test("a 2 s pause between the reads leaves wall minus boot as it was: the pair is read again", arguments: [0.0, 2.0, 30.0])
    func pause(seconds: TimeInterval) {
        let clock = Paused(pause: seconds)
        let before = clock.wall.timeIntervalSince1970 - clock.boot
        let (wall, boot) = clock.observed()
        #expect(abs((wall.timeIntervalSince1970 - boot) - before) < 0.001, "a pause of \(seconds) s read as a step of \((wall.timeIntervalSince1970 - boot) - before) s")
    }
}
