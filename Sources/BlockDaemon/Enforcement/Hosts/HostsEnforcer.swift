import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// E1: blocks domains through one managed section of the hosts file.
///
/// The file is re-read before every write (a user's concurrent edit is never lost), written
/// only when the section changes, and replaced atomically (HostsEnforcer+Write.swift). A write
/// that fails is reported and retried (§7 "Truth"): with a backoff from 1 s to 60 s and
/// whenever the file or its directory changes, until it succeeds; the engine is told when the
/// outcome changes (`onChange`) so that `applied` and the failure list follow the file. A watch
/// on the file restores the section within a second if it is removed or altered while blocks
/// are active, and reports the repair as tamper (S5). All state lives on `queue`.
public final class HostsEnforcer: Enforcer, @unchecked Sendable {
    public let mode = "hosts"
    public let path: String
    let log: any LogSink
    /// Where tamper repairs are reported (S5).
    let hits: ShieldHitSink
    /// Called on `queue` when a retry or a repair changed the outcome (written at last, or a new
    /// cause of failure): the engine enforces again to learn the truth.
    let onChange: @Sendable () -> Void
    let flush: @Sendable () -> Void
    let queue = DispatchQueue(label: "blockd.hosts")
    /// The section that must be in the file (nil: none).
    var expected: [UInt8]?
    /// The names blocked, by selection, kept from one enforce to the next (E1 at scale: a
    /// change costs the size of the change); `expected` is its rendering.
    var section: HostsSection
    var watch: FileWatch?
    var repairPending = false
    var warnedInPlace = false
    /// The file's resolved target last logged (a symlinked hosts file is followed, E1).
    var loggedTarget: String?
    /// Why the file does not hold `expected` (nil: it does); retried until it does.
    var failure: String?
    var backoff: TimeInterval = HostsEnforcer.firstRetry
    var retry: DispatchWorkItem?
    /// The file and directories as the last attempt left them: events caused by the attempt
    /// itself (its temp file, a restored in-place write) must not trigger the next one.
    var lastAttempt: [Int] = []
    /// The bytes the file held after the last attempt that succeeded: a file event that leaves
    /// them as they are (blockd's own write, seen by the watch) needs no scan of the file.
    var lastGood: [UInt8]?
    /// Where the section is in `lastGood` (nil: none, or not known).
    var lastGoodSection: Range<Int>?
    /// The paths that could not be watched, last time a watch was tried.
    var unwatchable: [String]?
    static let firstRetry: TimeInterval = 1, lastRetry: TimeInterval = 60

    /// E5: where blocked names point (the refusing sink when blockd's nftables table is usable).
    public let sink: HostsFile.Sink

    /// `hits` and `onChange` default to nothing for `blockd --release`, which only removes the section.
    public init(path: String, log: any LogSink, hits: @escaping ShieldHitSink = { _ in }, onChange: @escaping @Sendable () -> Void = {},
                sink: HostsFile.Sink = .unspecified, flushResolvers: @escaping @Sendable () -> Void = ResolverCache.flush) {
        self.sink = sink
        self.section = HostsSection(sink: sink)
        self.path = path
        self.log = log
        self.hits = hits
        self.onChange = onChange
        self.flush = flushResolvers
    }

    public func enforce(blocked: [Selection]) -> EnforcementReport { enforce(blocked: blocked, changed: nil) }

    public func enforce(blocked: [Selection], changed: Set<String>?) -> EnforcementReport {
        queue.sync {
            var report = EnforcementReport()
            // Per-user ones: UserTablesEnforcer.
            var machineWide: [Selection] { blocked.filter { $0.users == nil } }
            // E1: only validated names reach the file, whatever a config says; W1: each with
            // its common prefixes (the file has no wildcards). Unchanged selections cost nothing,
            // and when the engine says which changed, the others are not even looked at (a
            // section not yet in name order takes them all once).
            let given = changed.map { section.isByName ? Array(blocked.targets(named: $0).values.joined()) : blocked } ?? blocked
            let lines = given.filter { $0.users == nil }.map { (name: $0.name, domains: $0.domains) }
            expected = nil  // not sharing the section's kept rendering while it changes (no copy)
            let dropped = changed.map { section.update(lines, changed: $0) } ?? section.update(lines)
            for name in section.failingSelections {
                for message in section.failures(of: name) { report.add(EnforcementFailure(selection: name, message: message)) }
            }
            expected = section.rendered()
            let outcome = converge()
            // Truth (§7): lines of selections no longer blocked that the failed write left
            // in the file keep those selections in force; their unlock is pending, not done.
            if let failure = outcome.failure {
                var previous: [String: String] = [:]
                for part in dropped.reversed() { for name in part.names { previous[name] = part.selection } }
                for domain in outcome.onDisk ?? [] where !section.contains(domain) {
                    if let selection = previous[domain] { report.lingering[selection] = failure.message }
                }
            }
            settle(outcome.failure)
            if let failure = outcome.failure { report.failures.append(failure) }
            // Truth (§7): a selection is enforced when all its domains are in the file (they
            // are when the file holds the section as rendered: onDisk nil).
            if let onDisk = outcome.onDisk {
                for name in Set(machineWide.map(\.name)).sorted() where !section.names(of: name).allSatisfy(onDisk.contains) {
                    report.notEnforced(name, outcome.failure?.message ?? "its domains are not in \(path)")
                }
            }
            followFile()
            return report
        }
    }

    public func release() -> [EnforcementFailure] {
        queue.sync {
            expected = nil
            section = HostsSection(sink: sink)  // the next enforce takes the whole set
            watch = nil
            return converge().failure.map { [$0] } ?? []
        }
    }

    /// Makes the file hold exactly `expected`. Returns a failure to record if it cannot, the
    /// blocked domains now in the file (nil: all of `expected`'s, read from `section` rather
    /// than from 300,000 lines), and whether it wrote.
    func converge() -> (failure: EnforcementFailure?, onDisk: Set<String>?, wrote: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        defer { lastAttempt = fingerprint() }
        let current: [UInt8]
        switch HostsEnforcer.read(path) {
        case .success(let bytes): current = bytes
        case .failure(let message):
            if expected == nil { return (nil, [], false) }  // nothing to remove from a file we cannot read
            return (EnforcementFailure(selection: nil, message: "\(message); blockd retries until it can write the file"), [], false)
        }
        // The file as blockd left it: where the section is, is known (not scanned for).
        let known = lastGood.flatMap { $0.sameBytes(as: current) ? lastGoodSection : nil }
        let (updated, at) = desired(from: current, known: known)
        guard !updated.sameBytes(as: current) else {
            (lastGood, lastGoodSection) = (current, at)
            return (nil, nil, false)
        }
        (lastGood, lastGoodSection) = (nil, nil)
        if let message = write(updated) {
            // What the failed write left (the original, E1), read again rather than assumed.
            guard case .success(let after) = HostsEnforcer.read(path) else { return (EnforcementFailure(selection: nil, message: message), [], false) }
            return (EnforcementFailure(selection: nil, message: message), Set(HostsFile.blockedDomains(in: after)), false)
        }
        (lastGood, lastGoodSection) = (updated, at)
        flush()
        return (nil, nil, true)
    }

    /// `current` with the section it must hold and, outside it, every line that would give a
    /// blocked name another address held (E6: glibc's `multi on` returns every matching line);
    /// held lines come back byte for byte once their names are no longer blocked.
    func desired(from current: [UInt8]) -> [UInt8] { desired(from: current, known: nil).bytes }

    /// The same, and where the section is in it; `known`: where it is in `current`.
    func desired(from current: [UInt8], known: Range<Int>?) -> (bytes: [UInt8], section: Range<Int>?) {
        let section = self.section
        return HostsOverrides.splice(current, section: expected,
                                     blocking: section.count == 0 ? nil : { Site.cover(of: $0, where: section.contains) != nil }, known: known)
    }

    // MARK: Retry (§7: a write that fails is retried until it succeeds)

    /// Notes the outcome of an attempt; true when it changed (written at last, or a new cause).
    @discardableResult
    func settle(_ outcome: EnforcementFailure?) -> Bool {
        guard let outcome else {
            guard failure != nil else { return false }
            failure = nil
            backoff = HostsEnforcer.firstRetry
            retry?.cancel()
            retry = nil
            let count = section.count
            log.log(JournalEntry("Hosts file \(path) written again; \(count) domain\(count == 1 ? "" : "s") blocked", priority: .notice))
            return true
        }
        let changed = failure != outcome.message
        failure = outcome.message
        if retry == nil { scheduleRetry(after: backoff) }
        return changed
    }

    func scheduleRetry(after delay: TimeInterval) {
        retry?.cancel()
        let item = DispatchWorkItem { [weak self] in self?.retryNow() }
        retry = item
        backoff = min(backoff * 2, HostsEnforcer.lastRetry)
        queue.asyncAfter(deadline: .now() + delay, execute: item)
    }

    func retryNow() {
        retry = nil
        guard failure != nil else { return }
        if settle(converge().failure) { onChange() }
        followFile()
    }

    /// Watches the file (and a symlink's target) while there is something to keep in it or a
    /// failure to retry; watches again when the target changed.
    func followFile() {
        guard expected != nil || failure != nil else {
            watch = nil
            return
        }
        let paths = watchedPaths()
        guard watch?.paths != paths else { return }
        watch = FileWatch(paths: paths, queue: queue, everyEntry: true) { [weak self] aboutFile in self?.fileChanged(aboutFile) }
        if watch == nil && unwatchable != paths {
            unwatchable = paths  // said once; tried again on every attempt
            log.warning("Cannot watch \(path) for edits; a removed blockd section is restored, and a failed write retried, only on a timer")
        }
    }

    // MARK: Tamper (E1, S5)

    /// Coalesces a burst of events (an editor's write, rename, chmod) into one check. While a
    /// write is failing, any change of the file or its directory (space freed by a deleted
    /// file, a permission fixed) is worth an early retry, unless the last attempt caused it.
    func fileChanged(_ aboutFile: Bool) {
        if failure != nil {
            guard fingerprint() != lastAttempt else { return }
            scheduleRetry(after: 0.1)
            return
        }
        guard aboutFile, expected != nil, !repairPending else { return }
        repairPending = true
        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in self?.repair() }
    }

    func repair() {
        repairPending = false
        guard expected != nil, failure == nil else { return }
        let current: [UInt8]
        switch HostsEnforcer.read(path) {
        case .success(let bytes): current = bytes
        case .failure:
            current = []
        }
        if let lastGood, current.sameBytes(as: lastGood) { return }  // the event was blockd's own write
        guard !desired(from: current).sameBytes(as: current) else { return }
        let present = Set(HostsFile.blockedDomains(in: current))
        // E6: names that a line outside the section now gives an address (one appended during
        // the block) are tampered with as much as lines removed from the section.
        let owners = section.owners
        let blocked = Set(owners.keys)
        let overridden = HostsOverrides.hold(current, blocked: blocked).held.subtracting(HostsOverrides.heldNames(in: current))
        let covering = Set(overridden.compactMap { Site.cover(of: $0, in: blocked) })  // W1: a subdomain's line
        var affected = Set(owners.filter { !present.contains($0.key) || covering.contains($0.key) }.map(\.value))
        if affected.isEmpty { affected = Set(owners.values) }
        let outcome = converge()
        if settle(outcome.failure) { onChange() }  // the engine records the failure (T4)
        followFile()
        guard outcome.wrote else { return }
        for selection in affected.sorted() { hits(ShieldHit(kind: .tamper, selection: selection, path: path)) }
    }
}
