/// The browsers' managed policies blockd writes (E7), built as bytes; the daemon only
/// compares and writes them.
public enum ChromiumPolicy {
    /// The file blockd owns in each Chromium-family `policies/managed/` directory.
    public static let fileName = "blockd.json"

    /// The filters for `URLBlocklist`: every domain of every blocked selection (a host filter
    /// also covers its subdomains in Chromium's filter format, which the hosts file cannot) and
    /// every URL prefix (E8). Sorted and without duplicates, so the file changes only when what
    /// is blocked changes. Anything that does not pass `Domain.normalize`/`URLPrefix.normalize`
    /// is left out (the hosts enforcer reports it), so nothing unchecked reaches the file.
    public static func blocklist(_ blocked: [Selection]) -> [String] {
        var filters = Set<String>()
        for selection in blocked {
            for domain in selection.domains {
                if let d = try? Domain.normalize(domain) { filters.insert(d) }
            }
            for path in selection.paths {
                if let p = try? URLPrefix.normalize(path) { filters.insert(p) }
            }
        }
        return filters.sorted()
    }

    /// W3: what the document closes while anything is blocked, as `status` says it.
    public static let closes = ["private windows", "guest profiles", "new profiles"]

    /// The whole policy file, or nil when nothing machine-wide is blocked (then the file must not
    /// exist): Chromium on Linux reads machine-wide policies only, so a per-user selection (U1)
    /// has no part in it. `DnsOverHttpsMode: off` keeps the browser on the system resolver, which
    /// reads the hosts file, for as long as anything is blocked. W3: for as long, no Incognito
    /// window (`IncognitoModeAvailability` 1 is "disabled"), no guest profile and no new profile
    /// from the profile picker. Chromium reloads its managed policies while running: Incognito
    /// closes and opens again in a browser that is already open, within seconds. W2: while an
    /// allow-only selection is blocked, `URLBlocklist` also holds `*` and `URLAllowlist` what
    /// stays open (`AllowOnlyFilters`); without one the document has no `URLAllowlist` at all.
    public static func document(blocked all: [Selection]) -> [UInt8]? {
        let blocked = all.filter { $0.users == nil }
        guard !blocked.isEmpty else { return nil }
        var json: JSONObject = [:]
        if let allowOnly = AllowOnlyFilters(blocked) {
            json["URLBlocklist"] = .array(allowOnly.blocklist.map { .string($0) })
            json["URLAllowlist"] = .array(allowOnly.allowlist.map { .string($0) })
        } else {
            json["URLBlocklist"] = .array(blocklist(blocked).map { .string($0) })
            // W2: an always-allowed host under a blocked site; its longer host wins in Chromium.
            let exceptions = Set(blocked.flatMap { $0.exceptions ?? [] }).sorted()
            if !exceptions.isEmpty { json["URLAllowlist"] = .array(exceptions.map { .string($0) }) }
        }
        json["DnsOverHttpsMode"] = "off"
        json["IncognitoModeAvailability"] = 1
        json["BrowserGuestModeEnabled"] = false
        json["BrowserAddPersonEnabled"] = false
        return Array((JSON.object(json).prettyPrinted() + "\n").utf8)
    }

    /// W2: the filters for "everything but the allowed sites" in Chromium's URL filter format
    /// (chromium.org/administrators/url-blocklist-filter-format). Chromium picks the most
    /// specific filter for a URL: the longest matching host first (a host filter covers its
    /// subdomains, and the host is shortened one label at a time until a filter matches, `*`
    /// last), then the longest matching path; the allowlist wins only a tie. So `*` in the
    /// blocklist with `school.com` in the allowlist opens school.com and every name under it,
    /// and a blocked `games.school.com` or `school.com/games` beside it stays blocked.
    public struct AllowOnlyFilters: Equatable, Sendable {
        /// `*`, the blocked selections' filters (`ChromiumPolicy.blocklist`), and each blocked
        /// prefix again under an allowed subdomain of its host, where it would lose to the
        /// allowed host filter: allowed `www.a.com` and blocked `a.com/x` also blocks
        /// `www.a.com/x`.
        public var blocklist: [String]
        /// What every allow-only selection blocked now allows (two windows at once allow only
        /// what both allow), less what a blocked selection covers (an always-allowed host it
        /// excepts stays), and `internalPages`.
        public var allowlist: [String]
        /// The allowed sites and prefixes themselves, for `status`.
        public var allowed: [String]

        /// Chromium's own pages (settings, history, downloads, `chrome://policy`, which says
        /// why a page is blocked, and the new tab page when it is Chromium's). From Chromium 147
        /// (its URLBlocklist text) `*` alone no longer reaches `chrome://` URLs, and in 156
        /// `*` leaves them open while `chrome://*` closes them. Before 147 `*` closed them too,
        /// leaving a browser whose settings and new tab would not open; allowing them keeps
        /// every version alike.
        public static let internalPages = "chrome://*"
        /// The blocklist filter for every URL.
        public static let everything = "*"

        /// nil when no machine-wide allow-only selection is among `blocked`.
        public init?(_ all: [Selection]) {
            // Most changes have no allow-only window: said before anything is copied (E8's
            // pass at each change is then one look at each selection, not a copy of each).
            guard all.contains(where: { $0.users == nil && $0.isAllowOnly }) else { return nil }
            let machineWide = all.filter { $0.users == nil }  // Chromium on Linux has no per-user policy
            let windows = machineWide.filter(\.isAllowOnly)
            guard !windows.isEmpty else { return nil }
            let sets = windows.map { Self.filters(of: $0.allowed ?? []) }
            let blocks = machineWide.filter { !$0.isAllowOnly }
            let blockedFilters = Self.filters(of: blocks)
            // AlwaysAllowed=: hosts under a blocked domain that no block covers (the engine's `exceptions`).
            let exceptions = Set(blocks.flatMap { $0.exceptions ?? [] }.compactMap { try? Domain.normalize($0) })
            var allowed = Set<Filter>()
            var restated = Set<Filter>()
            for filter in Set(sets.joined()) where sets.allSatisfy({ set in set.contains { $0.covers(filter) } }) {
                // Equal filters go to the allowlist in Chromium, a longer allowed path or host
                // under a blocked one wins too: what a block covers is not allowed at all,
                // unless it is always allowed.
                let excepted = Site.cover(of: filter.host, in: exceptions) != nil
                guard excepted || !blockedFilters.contains(where: { $0.covers(filter) }) else { continue }
                allowed.insert(filter)
                for b in blockedFilters where !excepted && !b.path.isEmpty && b.host != filter.host
                    && Site.covers(b.host, filter.host) && b.path.hasPrefix(filter.path) {
                    restated.insert(Filter(host: filter.host, path: b.path))
                }
            }
            self.allowed = allowed.map(\.text).sorted()
            allowlist = Set(self.allowed + [Self.internalPages]).sorted()
            blocklist = Set(ChromiumPolicy.blocklist(machineWide) + restated.map(\.text) + [Self.everything]).sorted()
        }

        /// A host filter (`path` empty: the whole site) or a URL prefix filter, normalized.
        struct Filter: Hashable {
            var host: String
            var path: String
            var text: String { host + path }

            /// Whether every URL this filter matches, `other`'s do too: its host or one under
            /// it, and a path that starts with this one's (Chromium matches paths as prefixes).
            func covers(_ other: Filter) -> Bool { Site.covers(host, other.host) && other.path.hasPrefix(path) }
        }

        static func filters(of selections: [Selection]) -> Set<Filter> {
            var out = Set<Filter>()
            for selection in selections {
                for domain in selection.domains {
                    if let d = try? Domain.normalize(domain) { out.insert(Filter(host: d, path: "")) }
                }
                for path in selection.paths {
                    if let p = try? URLPrefix.normalize(path) {
                        let host = URLPrefix.host(of: p)
                        out.insert(Filter(host: host, path: String(p.dropFirst(host.count))))
                    }
                }
            }
            return out
        }
    }
}

/// Firefox's `policies.json` (E7): blockd adds `DNSOverHTTPS {"Enabled": false, "Locked": true}`
/// to the `policies` object and takes it out again at `--release`; while anything is blocked
/// it also sets `DisablePrivateBrowsing: true` (W3) and puts the administrator's own value back
/// when nothing is. Every other key, and their order, stays as the administrator wrote it.
/// Firefox reads the file only at its start.
public enum FirefoxPolicies {
    public static let key = "DNSOverHTTPS"
    public static let ours: JSONObject = ["Enabled": false, "Locked": true]
    /// W3: private windows closed while anything is blocked.
    public static let privateKey = "DisablePrivateBrowsing"

    /// What the file held before blockd touched it, so that `merge` and `restore` can put it back.
    public struct Record: Equatable, Sendable {
        /// The administrator's own `DNSOverHTTPS` value (nil: there was none).
        public var previous: JSON?
        /// Whether blockd created the file (then an empty one is removed again).
        public var createdFile: Bool
        /// W3: set while blockd's `DisablePrivateBrowsing: true` is in the file, holding the
        /// administrator's own value it stands in for; nil while the file's value is theirs. A
        /// record written before W3 has none, and rightly: that blockd never wrote the key.
        public var privateBrowsing: Replaced?

        public struct Replaced: Equatable, Sendable {
            /// nil: the administrator had no `DisablePrivateBrowsing`.
            public var previous: JSON?
            public init(previous: JSON?) { self.previous = previous }
        }

        /// B1: set while blockd's extension entry is in `ExtensionSettings`, holding what the
        /// administrator had under its ID (and whether there was an `ExtensionSettings` at all).
        public var extensionEntry: Nested?
        /// B1: the same for `Preferences`' `xpinstall.signatures.required`.
        public var signatures: Nested?

        /// A value blockd put under a key of a policy object (`ExtensionSettings`, `Preferences`).
        public struct Nested: Equatable, Sendable {
            /// What the administrator had under that key (nil: nothing).
            public var previous: JSON?
            /// Whether blockd created the policy object itself (then it goes when empty).
            public var createdOuter: Bool
            public init(previous: JSON?, createdOuter: Bool) { (self.previous, self.createdOuter) = (previous, createdOuter) }

            var json: JSON {
                var o: JSONObject = ["createdOuter": .bool(createdOuter)]
                if let previous { o["previous"] = previous }
                return .object(o)
            }

            init?(_ json: JSON?) {
                guard let created = json?["createdOuter"]?.bool else { return nil }
                self.init(previous: json?["previous"], createdOuter: created)
            }
        }

        public init(previous: JSON?, createdFile: Bool, privateBrowsing: Replaced? = nil, extensionEntry: Nested? = nil, signatures: Nested? = nil) {
            self.previous = previous
            self.createdFile = createdFile
            self.privateBrowsing = privateBrowsing
            (self.extensionEntry, self.signatures) = (extensionEntry, signatures)
        }

        public var json: JSON {
            var o: JSONObject = ["createdFile": .bool(createdFile)]
            if let previous { o["previous"] = previous }
            if let privateBrowsing {
                o["privateBrowsing"] = .object(privateBrowsing.previous.map { ["previous": $0] } ?? [:])
            }
            if let extensionEntry { o["extensionEntry"] = extensionEntry.json }
            if let signatures { o["signatures"] = signatures.json }
            return .object(o)
        }

        public init?(json: JSON) {
            guard let created = json["createdFile"]?.bool else { return nil }
            let replaced = json["privateBrowsing"]?.object.map { Replaced(previous: $0["previous"]) }
            self.init(previous: json["previous"], createdFile: created, privateBrowsing: replaced,
                      extensionEntry: Nested(json["extensionEntry"]), signatures: Nested(json["signatures"]))
        }

        /// Whether this record holds less than `other` (something blockd put in is being taken
        /// out): then the file is written before the record, so a crash between leaves a record
        /// that puts the same values back.
        public func lifts(from other: Record?) -> Bool {
            guard let other else { return false }
            return (other.privateBrowsing != nil && privateBrowsing == nil) || (other.extensionEntry != nil && extensionEntry == nil)
                || (other.signatures != nil && signatures == nil)
        }
    }

    public struct Merged: Equatable, Sendable {
        /// The new file, or nil when the file already says what blockd needs.
        public var bytes: [UInt8]?
        /// The record to keep: `record` as given, or a new one, with W3's part brought up to date.
        public var record: Record
    }

    /// `existing` with DoH off and locked, and (W3) private browsing disabled when
    /// `closePrivate`, else the administrator's own `DisablePrivateBrowsing` back. `record` is
    /// what blockd kept (nil: none yet, then the file as it is now is the administrator's). A
    /// file that is not a JSON object with an object `policies` is refused: rewriting it would
    /// lose what the administrator meant.
    /// B1: with `browserExtension`, blockd's extension force-installed (`ExtensionSettings`) and
    /// signatures not required (`Preferences`, locked), the administrator's own entries back when
    /// it is nil again.
    public static func merge(_ existing: [UInt8]?, record: Record?, closePrivate: Bool, browserExtension: BrowserExtension? = nil,
                             file: String) throws(CoreError) -> Merged {
        var root = JSONObject()
        if let existing { root = try parseRoot(existing, file: file) }
        let original = root
        var policies = try policiesObject(root, file: file)
        var record = record ?? Record(previous: policies[key], createdFile: existing == nil)
        policies[key] = .object(try lockedOff(policies[key], file: file))
        switch (closePrivate, record.privateBrowsing) {
        case (true, nil):
            // Taken from the file now, so an administrator's change between blocks is kept.
            record.privateBrowsing = Record.Replaced(previous: policies[privateKey])
            policies[privateKey] = true
        case (true, .some):
            policies[privateKey] = true
        case (false, .some(let replaced)):
            policies[privateKey] = replaced.previous
            record.privateBrowsing = nil
        case (false, nil):
            break
        }
        if let browserExtension {
            try put(browserExtension.firefoxEntry, at: ("ExtensionSettings", BrowserExtension.firefoxID), in: &policies, kept: &record.extensionEntry, file: file)
            try put(BrowserExtension.firefoxSignatures, at: ("Preferences", BrowserExtension.signaturesPreference), in: &policies,
                    kept: &record.signatures, file: file)
        } else {
            putBack(record.extensionEntry, at: ("ExtensionSettings", BrowserExtension.firefoxID), in: &policies)
            putBack(record.signatures, at: ("Preferences", BrowserExtension.signaturesPreference), in: &policies)
            (record.extensionEntry, record.signatures) = (nil, nil)
        }
        root["policies"] = .object(policies)
        return Merged(bytes: root == original && existing != nil ? nil : serialize(root), record: record)
    }

    /// B1: `value` under `policies[outer][inner]`, what was there kept in `kept` the first time.
    static func put(_ value: JSON, at key: (outer: String, inner: String), in policies: inout JSONObject, kept: inout Record.Nested?,
                    file: String) throws(CoreError) {
        var object = JSONObject()
        if let current = policies[key.outer] {
            guard let o = current.object else {
                throw CoreError(.invalidConfig, "\(file): \"policies\".\"\(key.outer)\" is not an object; fix it so that blockd can install its browser extension")
            }
            object = o
        }
        if kept == nil { kept = Record.Nested(previous: object[key.inner], createdOuter: policies[key.outer] == nil) }
        object[key.inner] = value
        policies[key.outer] = .object(object)
    }

    /// B1: the administrator's own value back under `policies[outer][inner]` (none: the key
    /// removed, and the object too if blockd created it and it is empty now).
    static func putBack(_ kept: Record.Nested?, at key: (outer: String, inner: String), in policies: inout JSONObject) {
        guard let kept, var object = policies[key.outer]?.object else { return }
        object[key.inner] = kept.previous
        policies[key.outer] = object.isEmpty && kept.createdOuter ? nil : .object(object)
    }

    /// The administrator's `DNSOverHTTPS` object with blockd's keys set over it.
    static func lockedOff(_ value: JSON?, file: String) throws(CoreError) -> JSONObject {
        var doh = JSONObject()
        if let value {
            guard let object = value.object else {
                throw CoreError(.invalidConfig, "\(file): \"policies\".\"\(key)\" is not an object; fix it so that blockd can lock DNS over HTTPS off")
            }
            doh = object
        }
        for (k, v) in ours { doh[k] = v }
        return doh
    }

    public enum Restored: Equatable, Sendable {
        case unchanged
        case rewrite([UInt8])
        case remove
    }

    /// `existing` without blockd's keys: the administrator's own `DNSOverHTTPS` and (W3)
    /// `DisablePrivateBrowsing` back as recorded, or, without a record, `DNSOverHTTPS` removed
    /// only if it is exactly blockd's (a `DisablePrivateBrowsing` then may be theirs: it stays).
    public static func restore(_ existing: [UInt8], record: Record?, file: String) throws(CoreError) -> Restored {
        let original = try parseRoot(existing, file: file)
        var root = original
        var policies = try policiesObject(root, file: file)
        if let record {
            policies[key] = record.previous
            if let replaced = record.privateBrowsing { policies[privateKey] = replaced.previous }
            putBack(record.extensionEntry, at: ("ExtensionSettings", BrowserExtension.firefoxID), in: &policies)
            putBack(record.signatures, at: ("Preferences", BrowserExtension.signaturesPreference), in: &policies)
        } else if policies[key] == .object(ours) {
            policies[key] = nil
        }
        if original["policies"] == nil && policies.isEmpty { return .unchanged }
        if policies.isEmpty && root.count == 1 && record?.createdFile == true { return .remove }
        root["policies"] = .object(policies)
        return root == original ? .unchanged : .rewrite(serialize(root))
    }

    static func parseRoot(_ bytes: [UInt8], file: String) throws(CoreError) -> JSONObject {
        let json: JSON
        do throws(CoreError) {
            json = try JSON.parse(bytes: bytes, maxDepth: 64)
        } catch {
            throw CoreError(.invalidConfig, "\(file): \(error.message); fix the file (blockd leaves a file it cannot read untouched)")
        }
        guard let object = json.object else {
            throw CoreError(.invalidConfig, "\(file): is not a JSON object; Firefox expects {\"policies\": {...}}")
        }
        return object
    }

    static func policiesObject(_ root: JSONObject, file: String) throws(CoreError) -> JSONObject {
        guard let value = root["policies"] else { return JSONObject() }
        guard let object = value.object else {
            throw CoreError(.invalidConfig, "\(file): \"policies\" is not an object; Firefox expects {\"policies\": {...}}")
        }
        return object
    }

    static func serialize(_ root: JSONObject) -> [UInt8] {
        Array((JSON.object(root).prettyPrinted() + "\n").utf8)
    }
}
