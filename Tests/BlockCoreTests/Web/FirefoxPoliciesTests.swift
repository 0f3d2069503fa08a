import Testing
@testable import BlockCore

/// E7, W3, B1: Firefox's policies.json merged and restored (split from BrowserPolicyTests.swift).
private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
private func text(_ b: [UInt8]?) -> String { b.map { String(decoding: $0, as: UTF8.self) } ?? "<nil>" }

@Suite struct FirefoxPoliciesTests {
    static let admin = """
    {"policies": {"DisableTelemetry": true, "Homepage": {"URL": "https://intranet.example/", "Locked": true},
     "ExtensionSettings": {"*": {"installation_mode": "blocked"}}, "Preferences": {"x.y": 1.5}},
     "comment": "kept"}
    """

    @Test("E7: merging keeps the administrator's keys, values and order, and adds DoH locked off")
    func mergeKeepsAdminKeys() throws {
        let merged = try FirefoxPolicies.merge(bytes(Self.admin), record: nil, closePrivate: false, file: "p.json")
        let out = try #require(merged.bytes)
        let json = try JSON.parse(bytes: out)
        let original = try JSON.parse(Self.admin)
        let policies = try #require(json["policies"]?.object)
        #expect(policies.keys == ["DisableTelemetry", "Homepage", "ExtensionSettings", "Preferences", "DNSOverHTTPS"])
        #expect(json["policies"]?["DNSOverHTTPS"] == ["Enabled": false, "Locked": true])
        for key in ["DisableTelemetry", "Homepage", "ExtensionSettings", "Preferences"] {
            #expect(policies[key] == original["policies"]?[key])
        }
        #expect(json["comment"] == "kept")
        #expect(merged.record == FirefoxPolicies.Record(previous: nil, createdFile: false))
        // Merging again changes nothing.
        #expect(try FirefoxPolicies.merge(out, record: merged.record, closePrivate: false, file: "p.json").bytes == nil)
    }

    @Test("B1: the extension joins the administrator's ExtensionSettings and Preferences, and leaves them exactly as they were when it goes or at release")
    func extensionEntries() throws {
        let id = String(repeating: "abcdefghijklmnop", count: 2)
        let host = Array(#"{"name":"com.blockd.host","allowed_origins":["chrome-extension://\#(id)/"]}"#.utf8)
        let ext = try BrowserExtension(directory: "/usr/share/blockd/browser/", chromiumID: id + "\n", chromiumHost: host)
        let merged = try FirefoxPolicies.merge(bytes(Self.admin), record: nil, closePrivate: false, browserExtension: ext, file: "p.json")
        let json = try JSON.parse(bytes: try #require(merged.bytes))
        #expect(json["policies"]?["ExtensionSettings"]?["*"] == ["installation_mode": "blocked"], "the administrator's own entry stays")
        #expect(json["policies"]?["ExtensionSettings"]?["blockd@blockd.local"]?["install_url"] == "file:///usr/share/blockd/browser/blockd.xpi")
        #expect(json["policies"]?["Preferences"]?["x.y"] == 1.5)
        #expect(json["policies"]?["Preferences"]?["xpinstall.signatures.required"] == ["Value": false, "Status": "locked"])
        // Merged again: nothing to write. Without the extension: the administrator's file back.
        #expect(try FirefoxPolicies.merge(merged.bytes, record: merged.record, closePrivate: false, browserExtension: ext, file: "p.json").bytes == nil)
        let off = try FirefoxPolicies.merge(merged.bytes, record: merged.record, closePrivate: false, file: "p.json")
        #expect(off.record.lifts(from: merged.record) && off.record.extensionEntry == nil)
        let back = try JSON.parse(bytes: try #require(off.bytes))
        #expect(back["policies"]?["ExtensionSettings"] == (try JSON.parse(Self.admin))["policies"]?["ExtensionSettings"])
        #expect(back["policies"]?["Preferences"] == (try JSON.parse(Self.admin))["policies"]?["Preferences"])
        // Release with the extension in: the same, and a file blockd created goes whole.
        guard case .rewrite(let released) = try FirefoxPolicies.restore(try #require(merged.bytes), record: merged.record, file: "p.json") else {
            Issue.record("expected a write"); return
        }
        #expect(try JSON.parse(bytes: released) == (try JSON.parse(Self.admin)))
        let created = try FirefoxPolicies.merge(nil, record: nil, closePrivate: false, browserExtension: ext, file: "p.json")
        #expect(try FirefoxPolicies.restore(try #require(created.bytes), record: created.record, file: "p.json") == .remove)
        // A record survives the state file.
        #expect(FirefoxPolicies.Record(json: merged.record.json) == merged.record)
        #expect(throws: CoreError.self) { try BrowserExtension(directory: "/x", chromiumID: "not-an-id", chromiumHost: host) }
    }

    @Test("E7: release takes out only blockd's keys; an admin's own DNSOverHTTPS comes back as it was")
    func restoreOnlyOurs() throws {
        let merged = try FirefoxPolicies.merge(bytes(Self.admin), record: nil, closePrivate: false, file: "p.json")
        guard case .rewrite(let back) = try FirefoxPolicies.restore(try #require(merged.bytes), record: merged.record, file: "p.json") else {
            Issue.record("expected a write"); return
        }
        #expect(try JSON.parse(bytes: back) == (try JSON.parse(Self.admin)))

        let withDoH = #"{"policies": {"DNSOverHTTPS": {"Enabled": true, "ProviderURL": "https://doh.example/"}}}"#
        let m2 = try FirefoxPolicies.merge(bytes(withDoH), record: nil, closePrivate: false, file: "p.json")
        let locked = try JSON.parse(bytes: try #require(m2.bytes))
        #expect(locked["policies"]?["DNSOverHTTPS"] == ["Enabled": false, "ProviderURL": "https://doh.example/", "Locked": true])
        guard case .rewrite(let back2) = try FirefoxPolicies.restore(try #require(m2.bytes), record: m2.record, file: "p.json") else {
            Issue.record("expected a write"); return
        }
        #expect(try JSON.parse(bytes: back2) == (try JSON.parse(withDoH)))
    }

    @Test("E7: a file blockd created is removed when only its keys were in it; without a record only an exact match goes")
    func createdFile() throws {
        let m = try FirefoxPolicies.merge(nil, record: nil, closePrivate: false, file: "p.json")
        #expect(m.record.createdFile)
        let out = try #require(m.bytes)
        #expect(try FirefoxPolicies.restore(out, record: m.record, file: "p.json") == .remove)
        // No record: blockd's exact value is taken out, the file (maybe the admin's) stays.
        guard case .rewrite(let left) = try FirefoxPolicies.restore(out, record: nil, file: "p.json") else {
            Issue.record("expected a write"); return
        }
        #expect(try JSON.parse(bytes: left) == ["policies": [:]])
        let other = bytes(#"{"policies": {"DNSOverHTTPS": {"Enabled": false}}}"#)
        #expect(try FirefoxPolicies.restore(other, record: nil, file: "p.json") == .unchanged)
        #expect(FirefoxPolicies.Record(json: m.record.json) == m.record)
    }

    /// The administrator's file with their own `DisablePrivateBrowsing` (nil: none) in the middle.
    static func adminFile(privateBrowsing: JSON?) -> [UInt8] {
        var policies: JSONObject = ["DisableTelemetry": true]
        if let privateBrowsing { policies["DisablePrivateBrowsing"] = privateBrowsing }
        policies["Homepage"] = ["URL": "https://intranet.example/"]
        return Array(JSON.object(["policies": .object(policies)]).prettyPrinted().utf8)
    }

    @Test("W3: closing sets DisablePrivateBrowsing true over the administrator's own value; lifting and release put theirs back exactly", arguments: [
        nil, JSON.bool(false), JSON.bool(true), JSON.null,
    ] as [JSON?])
    func closeAndLift(_ own: JSON?) throws {
        let admin = Self.adminFile(privateBrowsing: own)
        let start = try FirefoxPolicies.merge(admin, record: nil, closePrivate: false, file: "p.json")
        let open = try #require(start.bytes)  // DoH locked off, nothing else changed
        #expect(start.record == FirefoxPolicies.Record(previous: nil, createdFile: false))
        #expect(try JSON.parse(bytes: open)["policies"]?["DisablePrivateBrowsing"] == own)

        let closing = try FirefoxPolicies.merge(open, record: start.record, closePrivate: true, file: "p.json")
        #expect(closing.record.privateBrowsing == FirefoxPolicies.Record.Replaced(previous: own))
        #expect((closing.bytes == nil) == (own == true), "written only when the bytes change")
        let closed = closing.bytes ?? open
        let policies = try #require(try JSON.parse(bytes: closed)["policies"]?.object)
        #expect(policies["DisablePrivateBrowsing"] == true)
        #expect(policies.keys.filter { $0 != "DisablePrivateBrowsing" } == ["DisableTelemetry", "Homepage", "DNSOverHTTPS"])
        let again = try FirefoxPolicies.merge(closed, record: closing.record, closePrivate: true, file: "p.json")
        #expect(again.bytes == nil && again.record == closing.record, "closing again changes nothing")
        #expect(FirefoxPolicies.Record(json: closing.record.json) == closing.record, "the record keeps \"none\" apart from null")

        let lifting = try FirefoxPolicies.merge(closed, record: closing.record, closePrivate: false, file: "p.json")
        #expect(lifting.record == start.record)
        #expect((lifting.bytes ?? closed) == open, "lifted: the file as it was between blocks, byte for byte")

        guard case .rewrite(let released) = try FirefoxPolicies.restore(closed, record: closing.record, file: "p.json") else {
            Issue.record("expected a write"); return
        }
        #expect(try JSON.parse(bytes: released) == (try JSON.parse(bytes: admin)))
        #expect(try JSON.parse(bytes: released).object?["policies"]?.object?.keys == (try JSON.parse(bytes: admin)).object?["policies"]?.object?.keys)
    }

    @Test("W3: a record written before W3 has no private-browsing part: the file's value is the administrator's, captured at the first close")
    func oldRecord() throws {
        // What the previous blockd left: its record (no privateBrowsing) and the file with DoH merged.
        let old = try #require(FirefoxPolicies.Record(json: try JSON.parse(#"{"createdFile": false}"#)))
        #expect(old.privateBrowsing == nil)
        let admin = Self.adminFile(privateBrowsing: false)
        let merged = try #require(try FirefoxPolicies.merge(admin, record: nil, closePrivate: false, file: "p.json").bytes)

        let closing = try FirefoxPolicies.merge(merged, record: old, closePrivate: true, file: "p.json")
        #expect(closing.record == FirefoxPolicies.Record(previous: nil, createdFile: false, privateBrowsing: .init(previous: false)))
        #expect(try JSON.parse(bytes: try #require(closing.bytes))["policies"]?["DisablePrivateBrowsing"] == true)
        // Nothing blocked at the upgrade: the administrator's value stays, the record as it was.
        let idle = try FirefoxPolicies.merge(merged, record: old, closePrivate: false, file: "p.json")
        #expect(idle.bytes == nil && idle.record == old)

        let lifted = try FirefoxPolicies.merge(try #require(closing.bytes), record: closing.record, closePrivate: false, file: "p.json")
        #expect(lifted.bytes == merged)
        guard case .rewrite(let released) = try FirefoxPolicies.restore(try #require(closing.bytes), record: closing.record, file: "p.json") else {
            Issue.record("expected a write"); return
        }
        #expect(try JSON.parse(bytes: released) == (try JSON.parse(bytes: admin)))
    }

    @Test("W3: an administrator's change between blocks is what the next lift puts back")
    func changeBetweenBlocks() throws {
        let first = try FirefoxPolicies.merge(Self.adminFile(privateBrowsing: nil), record: nil, closePrivate: true, file: "p.json")
        let lifted = try FirefoxPolicies.merge(try #require(first.bytes), record: first.record, closePrivate: false, file: "p.json")
        #expect(try JSON.parse(bytes: try #require(lifted.bytes))["policies"]?["DisablePrivateBrowsing"] == nil)
        // Between blocks the administrator writes their own value.
        let edited = Self.adminFile(privateBrowsing: false)
        let second = try FirefoxPolicies.merge(edited, record: lifted.record, closePrivate: true, file: "p.json")
        #expect(second.record.privateBrowsing == .init(previous: false))
        let back = try FirefoxPolicies.merge(try #require(second.bytes), record: second.record, closePrivate: false, file: "p.json")
        #expect(try JSON.parse(bytes: try #require(back.bytes))["policies"]?["DisablePrivateBrowsing"] == false)
    }

    @Test("W3: a file blockd created while blocked is removed at release; without a record a DisablePrivateBrowsing stays")
    func createdWhileBlocked() throws {
        let m = try FirefoxPolicies.merge(nil, record: nil, closePrivate: true, file: "p.json")
        let out = try #require(m.bytes)
        #expect(try JSON.parse(bytes: out) == ["policies": ["DNSOverHTTPS": ["Enabled": false, "Locked": true], "DisablePrivateBrowsing": true]])
        #expect(try FirefoxPolicies.restore(out, record: m.record, file: "p.json") == .remove)
        // No record: it may be the administrator's own, and leaving it keeps private windows closed.
        guard case .rewrite(let left) = try FirefoxPolicies.restore(out, record: nil, file: "p.json") else {
            Issue.record("expected a write"); return
        }
        #expect(try JSON.parse(bytes: left) == ["policies": ["DisablePrivateBrowsing": true]])
    }

    @Test("E7: a file blockd cannot read is refused, not rewritten", arguments: [
        "not json", "[1]", #"{"policies": []}"#, #"{"policies": {"DNSOverHTTPS": true}}"#,
    ])
    func refusesBadFiles(_ input: String) {
        #expect(throws: CoreError.self) { try FirefoxPolicies.merge(bytes(input), record: nil, closePrivate: false, file: "p.json") }
    }
}
