import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// E7/E8: the browsers' managed policies. One `blockd.json` in the `policies/managed/`
/// directory of every installed Chromium-family browser holds `URLBlocklist` (what is blocked
/// now, URL prefixes included; W2: `*` and a `URLAllowlist` during an allow-only window),
/// `DnsOverHttpsMode: off` and (W3) no Incognito, guest or new profile while anything is
/// blocked; Firefox's `policies.json` gets DNS over HTTPS locked off and (W3) private browsing
/// disabled while anything is blocked (it reads the file only at its start).
///
/// Files are written atomically (AtomicFile), only when their bytes change, removed when
/// nothing is blocked and at `--release`. Every path sits under `policyRoot` (`/` on a real
/// system), so a sandboxed blockd writes nowhere else.
///
/// T9: a loosening (the machine-wide blocked selections only shrank) is written on the
/// enforcer's own queue after `enforce` returns, so an unlock's hosts file and its journal
/// entry do not wait for a file per browser, each with its fsyncs; a browser keeps blocking a
/// few milliseconds longer, never less. Anything else is written before `enforce` returns
/// (§7: nothing is said blocked before its files say so), after any loosening still pending.
/// A deferred write that fails asks for a new reconcile (`onChange`), whose synchronous retry
/// reports the failure (`LooseningOrder`, shared with the cut enforcer's table).
public final class BrowserPolicyEnforcer: Enforcer, @unchecked Sendable {
    public var mode: String { "browsers" }
    /// Off when turned off or when there is no browser to write for: the mode line then does
    /// not claim it (a policy root of a sandbox with Firefox named explicitly still counts).
    public var off: String? {
        if !enabled { return "turned off (BrowserPolicies=no)" }
        if installed.isEmpty && !firefoxInstalled { return "no supported browser is installed" }
        return nil
    }

    /// A Chromium-family browser: it counts as installed when one of `markers` exists, and its
    /// managed policies are read from `managed` (each path documented by its vendor for Linux).
    struct Browser {
        var name: String
        var markers: [String]
        var managed: String
    }

    static let chromiumFamily = [
        Browser(name: "chromium", markers: ["etc/chromium", "usr/lib/chromium"], managed: "etc/chromium/policies/managed"),
        Browser(name: "chrome", markers: ["etc/opt/chrome", "opt/google/chrome"], managed: "etc/opt/chrome/policies/managed"),
        Browser(name: "brave", markers: ["etc/brave", "opt/brave.com/brave"], managed: "etc/brave/policies/managed"),
        Browser(name: "edge", markers: ["etc/opt/edge", "opt/microsoft/msedge"], managed: "etc/opt/edge/policies/managed"),
        Browser(name: "vivaldi", markers: ["etc/opt/vivaldi", "opt/vivaldi"], managed: "etc/opt/vivaldi/policies/managed"),
    ]
    static let firefoxMarkers = ["etc/firefox", "usr/lib/firefox-esr", "usr/lib/firefox", "opt/firefox"]

    public let enabled: Bool
    public let root: String
    public let firefoxPath: String
    /// Whether `firefoxPath` was named explicitly (then it is written even without a Firefox).
    let firefoxExplicit: Bool
    /// Where blockd remembers what Firefox's file held before (so `--release` can put it back).
    let recordPath: String
    let log: any LogSink
    /// Called when a deferred write failed: the engine reconciles, and the retry reports why.
    let onChange: @Sendable () -> Void
    /// Where the files are written, in the order the changes came.
    let queue = DispatchQueue(label: "blockd.browser-policies")
    /// The machine-wide selections the files were last asked to hold, by name (nil: not yet
    /// asked, or released).
    private var asked: [String: Selection]?
    /// The last write of the files failed: the next change writes them whatever it is.
    private var failing = false
    /// E8: the blocked machine-wide selections of URL prefixes only, by name (`keepPathOnly`).
    private var pathOnly: Set<String> = []
    private let lock = Lock()
    /// Bumped by every property `notes` is made of (which browsers are installed is looked up
    /// on disk; the notes cache keeps that for a second at most).
    public let notesVersion = NotesVersion()
    private var written: [String] = [] { didSet { notesVersion.bump() } }
    /// Whether Firefox's file has been merged (DoH locked off) since blockd started.
    var firefoxDone = false { didSet { notesVersion.bump() } }
    /// W3: whether Firefox's file holds blockd's `DisablePrivateBrowsing: true` now.
    var firefoxPrivateClosed = false { didSet { notesVersion.bump() } }
    private var blockedPaths: [String] = [] { didSet { notesVersion.bump() } }
    /// W2: the sites and prefixes an allow-only window leaves open in the Chromium-family files
    /// (nil: no machine-wide allow-only selection is blocked).
    private var allowOnly: [String]? { didSet { notesVersion.bump() } }

    /// B1: blockd's own extension, force-installed by the policies (nil: not installed here,
    /// or `BrowserExtension=no`; `extensionProblem` says which, for `status`).
    let browserExtension: BrowserExtension?
    let extensionProblem: String?

    public init(config: DaemonConfig, stateDir: String, log: any LogSink, onChange: @escaping @Sendable () -> Void = {}) {
        (browserExtension, extensionProblem) = Self.loadExtension(config.browserExtension)
        enabled = config.browserPolicies
        root = config.policyRoot.hasSuffix("/") ? config.policyRoot : config.policyRoot + "/"
        firefoxPath = config.firefoxPolicies ?? root + "etc/firefox/policies/policies.json"
        firefoxExplicit = config.firefoxPolicies != nil
        recordPath = stateDir + "/firefox-policies.json"
        self.log = log
        self.onChange = onChange
    }

    func path(_ relative: String) -> String { root + relative }

    func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    var installed: [Browser] { Self.chromiumFamily.filter { b in b.markers.contains { exists(path($0)) } } }

    var firefoxInstalled: Bool { firefoxExplicit || Self.firefoxMarkers.contains { exists(path($0)) } }

    /// A selection of URL prefixes only (E8) is enforced by these files alone, so it is not
    /// enforced (§7 "Truth") where no browser takes a policy or a file could not be
    /// written; a selection with domains is enforced by the hosts file whatever happens here.
    public func enforce(blocked all: [Selection]) -> EnforcementReport { enforce(blocked: all, changed: nil) }

    /// `changed`: the files are worked out again only when a machine-wide selection among
    /// them is not what they were last asked to hold (and whenever the last write failed).
    public func enforce(blocked all: [Selection], changed: Set<String>?) -> EnforcementReport {
        // Browser policies are machine-wide (scopes with paths are refused).
        // The changed selections, found once by binary search (`all` comes in name order then).
        let given = changed.map { all.targets(named: $0) }
        var report = EnforcementReport(failures: write(all, changed: changed, given: given))
        let pathOnly = lock.withLock { keepPathOnly(all, changed: changed, given: given) }
        guard !pathOnly.isEmpty else { return report }
        // Prefixes are enforced where at least one Chromium-family policy file holds them.
        let cause: String? = !enabled ? "browser policies are turned off (BrowserPolicies=no), and only they can enforce URL prefixes"
            : installed.isEmpty ? "no supported browser is installed to enforce URL prefixes"
            : lock.withLock { written.isEmpty } ? report.failures.first?.message ?? "no browser policy file holds them"
            : nil
        if let cause { for name in pathOnly { report.partOff(name, .pages, cause) } }  // every part off: not enforced (settle)
        return report
    }

    /// E8: the names of the machine-wide selections of URL prefixes only among `all`, kept in
    /// `pathOnly`: with `changed`, only those selections (`given`) are looked at, else all.
    private func keepPathOnly(_ all: [Selection], changed: Set<String>?, given: [String: [Selection]]?) -> Set<String> {
        func isPathOnly(_ s: Selection) -> Bool { s.users == nil && s.domains.isEmpty && !s.paths.isEmpty }
        guard let changed, let given else {
            pathOnly = Set(all.filter(isPathOnly).map(\.name))
            return pathOnly
        }
        for name in changed {
            if given[name]?.contains(where: isPathOnly) == true { pathOnly.insert(name) } else { pathOnly.remove(name) }
        }
        return pathOnly
    }

    /// What a change asks of the files: nothing, a loosening (the machine-wide selections only
    /// shrank), or anything else.
    enum Step { case same, loosening, other }

    /// The files for the machine-wide selections of `all`: a loosening after `enforce`
    /// returns, anything else before (`LooseningOrder`).
    func write(_ all: [Selection], changed: Set<String>?, given: [String: [Selection]]?) -> [EnforcementFailure] {
        let step = lock.withLock { record(all, changed: changed, given: given) }
        guard step != .same else { return [] }
        return LooseningOrder.carryOut(loosening: step == .loosening, on: queue, failed: { !$0.isEmpty }, onChange: onChange) { [self] in
            writeFiles(all)
        } ?? []
    }

    /// The files for the machine-wide selections of `all`, on `queue`; a failure makes the
    /// next change a whole pass.
    private func writeFiles(_ all: [Selection]) -> [EnforcementFailure] {
        // Without per-user blocks the list is the machine's as it is, not a copy of every selection.
        let failures = policies(for: all.allSatisfy { $0.users == nil } ? all : all.filter { $0.users == nil })
        lock.withLock { failing = !failures.isEmpty }
        return failures
    }

    /// Notes in `asked` what the files are asked to hold now, and says what that changes.
    /// With `changed` (and a previous ask that was written), only those selections are looked
    /// at: equal selections usually share their arrays' storage, so a compare is cheap.
    private func record(_ all: [Selection], changed: Set<String>?, given: [String: [Selection]]?) -> Step {
        guard let changed, let given, asked != nil, !failing else {
            var now: [String: Selection] = [:]
            for selection in all where selection.users == nil && now[selection.name] == nil { now[selection.name] = selection }
            defer { asked = now }
            guard let asked, now.count < asked.count, now.allSatisfy({ name, selection in asked[name] == selection }) else { return .other }
            return .loosening
        }
        var (shrank, other) = (false, false)
        for name in changed {
            let after = given[name]?.first { $0.users == nil }
            guard asked![name] != after else { continue }
            if after == nil { shrank = true } else { other = true }
            asked![name] = after  // in place: the other selections are not copied
        }
        return other ? .other : shrank ? .loosening : .same
    }

    func policies(for blocked: [Selection]) -> [EnforcementFailure] {
        lock.withLock {
            blockedPaths = blocked.flatMap(\.paths)
            allowOnly = ChromiumPolicy.AllowOnlyFilters(blocked)?.allowed
            guard enabled else { return [] }
            var failures: [EnforcementFailure] = []
            let document = installed.isEmpty ? nil : ChromiumPolicy.document(blocked: blocked)  // none to write for
            var now: [String] = []
            for browser in installed {
                let file = path(browser.managed) + "/" + ChromiumPolicy.fileName
                do {
                    if let document {
                        try write(document, to: file)
                        now.append(file)
                    } else {
                        try remove(file)
                    }
                } catch {
                    failures.append(EnforcementFailure(selection: nil, message: "cannot update the \(browser.name) policy \(file): \(error); blockd retries at the next change"))
                }
            }
            written = now
            failures += extensionFiles(browsers: installed)
            // W3: closed while anything machine-wide is blocked, the administrator's value back after.
            if let failure = mergeFirefox(closePrivate: !blocked.isEmpty) { failures.append(failure) }
            return failures
        }
    }

    public func release() -> [EnforcementFailure] {
        queue.sync { lock.withLock {
            guard enabled else { return [] }
            var failures: [EnforcementFailure] = []
            for browser in Self.chromiumFamily {
                let file = path(browser.managed) + "/" + ChromiumPolicy.fileName
                do { try remove(file) } catch {
                    failures.append(EnforcementFailure(selection: nil, message: "cannot remove \(file): \(error)"))
                }
            }
            written = []
            failures += extensionFiles(browsers: [])
            if let failure = restoreFirefox() { failures.append(failure) }
            asked = nil
            failing = false
            return failures
        } }
    }

    /// Facts for `status`'s enforcement object: which policy files hold blocks now, which
    /// browsers were found, what is closed (W3), and whether URL prefixes (E8) are enforced
    /// anywhere.
    public func notes() -> JSONObject {
        lock.withLock {
            let browsers = installed.map(\.name) + (firefoxInstalled ? ["firefox"] : [])
            var o: JSONObject = ["enabled": .bool(enabled), "root": .string(root)]
            o["browsers"] = .array(browsers.map { .string($0) })
            o["files"] = .array(written.map { .string($0) })
            o["firefox"] = enabled && firefoxDone ? .string(firefoxPath) : .null
            o["closed"] = .array(closed.map { .string($0) })
            o["firefoxPrivateClosed"] = .bool(enabled && firefoxPrivateClosed)
            // W2: only while a Chromium-family file holds an allow-only window.
            if let allowOnly, !written.isEmpty { o["allowOnly"] = .array(allowOnly.map { .string($0) }) }
            // B1: the extension, where it is installed from, or why it is not.
            if let browserExtension, enabled {
                o["extension"] = .object(["chromiumID": .string(browserExtension.chromiumID), "firefoxID": .string(BrowserExtension.firefoxID),
                                          "directory": .string(browserExtension.directory)])
            } else {
                o["extensionReason"] = .string(!enabled ? "browser policies are turned off (BrowserPolicies=no)" : extensionProblem ?? "not installed")
            }
            var notes: JSONObject = ["browserPolicies": .object(o)]
            if !enabled {
                notes["browsersReason"] = "browser policies are turned off (BrowserPolicies=no)"
            } else if browsers.isEmpty {
                notes["browsersReason"] = "no supported browser is installed"
            }
            if !blockedPaths.isEmpty && (!enabled || installed.isEmpty) {
                let why = enabled ? "no supported Chromium-family browser is installed" : "browser policies are turned off"
                notes["pathRules"] = .string("URL prefixes (\(blockedPaths.joined(separator: ", "))) are not enforced: \(why)")
            }
            return notes
        }
    }

    /// W3: what no browser opens now: all `ChromiumPolicy.closes` where a Chromium-family file
    /// holds blocks, private windows where only Firefox's file closes them.
    var closed: [String] {
        guard enabled else { return [] }
        if !written.isEmpty { return ChromiumPolicy.closes }
        return firefoxPrivateClosed ? ["private windows"] : []
    }

    // MARK: Files

    func write(_ bytes: [UInt8], to file: String) throws {
        if let current = FileManager.default.contents(atPath: file), Array(current).sameBytes(as: bytes) { return }
        try makeDirectories(Path.parent(file))
        try AtomicFile.write(Data(bytes), to: file, mode: 0o644)
        // Browsers run as the user: the policy must be readable whatever blockd's umask is.
        chmod(file, 0o644)
        log.log(JournalEntry("Browser policy \(file) updated", priority: .info))
    }

    func remove(_ file: String) throws {
        guard unlink(file) == 0 else {
            if errno == ENOENT { return }
            throw DaemonError.system("cannot remove \(file)", errno)
        }
        AtomicFile.syncDirectory(Path.parent(file))
        log.log(JournalEntry("Browser policy \(file) removed", priority: .info))
    }

    /// `mkdir -p` with mode 0755 (readable by browsers running as any user).
    func makeDirectories(_ dir: String) throws {
        guard !exists(dir) else { return }
        let parent = Path.parent(dir)
        if parent != dir && !parent.isEmpty { try makeDirectories(parent) }
        guard mkdir(dir, 0o755) == 0 || errno == EEXIST else { throw DaemonError.system("cannot create \(dir)", errno) }
        chmod(dir, 0o755)
    }
}
