import BlockTestTools
import Foundation
import Testing

/// B1: scripts/pack-extension, run for real into a temp directory with a throwaway key: the CRX3
/// it writes is read back field by field (its signature checked by openssl, as Chromium checks
/// it), the XPI's manifest carries the gecko id, rebuilds give the same bytes, and the sources
/// it packs agree with each other (one version, the same message keys in every language, every
/// key the code uses there). Chromium itself loading the CRX by policy is torture/browser_ext.py.
@Suite("B1: the browser extension's packages", .serialized)
struct ExtensionPackTests {
    static let python = "/usr/bin/python3"
    static let openssl = "/usr/bin/openssl"
    static let tools = [python, openssl]
    static let packer = Repo.root + "/scripts/pack-extension"
    static let browser = Repo.root + "/browser"

    /// The packer's output in a temp directory, with its own key.
    struct Packed {
        let dir: TempDir
        var path: String { dir.path }

        func data(_ name: String) throws -> [UInt8] {
            guard let d = FileManager.default.contents(atPath: path + "/" + name) else { throw TestFailure("pack-extension wrote no \(name)") }
            return [UInt8](d)
        }

        func text(_ name: String) throws -> String { String(decoding: try data(name), as: UTF8.self) }
    }

    /// Packs with the key `key` (made once per call when nil) into `out` (a temp directory when nil).
    static func pack(key: String, into out: TempDir? = nil, prefix: String? = nil) throws -> Packed {
        let out = try out ?? TempDir(prefix: "bd-pack-")
        let result = try Run.capture(packer, [out.path + "/out"], environment: ["EXTENSION_KEY": key, "PREFIX": prefix])
        guard result.status == 0 else { throw TestFailure("pack-extension failed (\(result.status)): \(result.output)") }
        return Packed(dir: out)
    }

    /// A throwaway RSA key in `dir`.
    static func key(in dir: TempDir) throws -> String {
        let key = dir.path + "/key.pem"
        let made = try Run.capture(openssl, ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key])
        guard made.status == 0 else { throw TestFailure("openssl genpkey: \(made.output)") }
        return key
    }

    @Test("B1: the CRX3 header parses; its crx_id is the ID of its public key and chromium-id; its signature verifies",
          .enabled(if: Privileged.can(tools: ExtensionPackTests.tools), Privileged.needsTools))
    func crx() throws {
        if Privileged.unavailable(tools: Self.tools) != nil { return }
        let work = try TempDir(prefix: "bd-pack-")
        let packed = try Self.pack(key: try Self.key(in: work))
        let out = packed.path + "/out"
        let crx = try CRX3(try packed.data("out/blockd.crx"))
        #expect(crx.version == 3)
        #expect(crx.proofs.count == 1, "one sha256_with_rsa proof: \(crx.proofs.count)")
        let proof = try #require(crx.proofs.first)
        let id = try Self.chromiumID(publicKey: proof.key, in: work)
        #expect(crx.crxID.count == 16)
        #expect(Self.letters(crx.crxID) == id, "crx_id \(Self.letters(crx.crxID)) against the key's ID \(id)")
        let written = try String(contentsOfFile: out + "/chromium-id", encoding: .utf8)
        #expect(written == id + "\n", "chromium-id says \(written)")
        #expect(id.count == 32 && id.allSatisfy { ("a"..."p").contains($0) })

        // The signature, over what Chromium's verifier hashes (components/crx_file/crx_verifier.cc).
        let signed: [UInt8] = Array("CRX3 SignedData".utf8) + [0] + Self.le32(crx.signedHeaderData.count) + crx.signedHeaderData + crx.zip
        try Data(signed).write(to: URL(fileURLWithPath: work.path + "/signed"))
        try Data(proof.signature).write(to: URL(fileURLWithPath: work.path + "/signature"))
        try Data(proof.key).write(to: URL(fileURLWithPath: work.path + "/key.der"))
        let pem = try Run.capture(Self.openssl, ["pkey", "-pubin", "-inform", "DER", "-in", work.path + "/key.der", "-out", work.path + "/key.pub"])
        #expect(pem.status == 0, "the CRX's public key is a SubjectPublicKeyInfo openssl reads: \(pem.output)")
        let verified = try Run.capture(Self.openssl, ["dgst", "-sha256", "-verify", work.path + "/key.pub", "-signature", work.path + "/signature",
                                                      work.path + "/signed"])
        #expect(verified.status == 0 && verified.output.contains("Verified OK"), "openssl: \(verified.output)")

        let manifest = try Self.zipManifest(crx.zip, in: work)
        #expect(manifest["manifest_version"] as? Int == 3, "the CRX holds the Chromium (MV3) manifest: \(manifest)")
        let updates = try String(contentsOfFile: out + "/updates.xml", encoding: .utf8)
        #expect(updates.contains("appid='\(id)'"))
        #expect(updates.contains("codebase='file:///usr/local/share/blockd/browser/blockd.crx'"), "PREFIX defaults to /usr/local: \(updates)")
        #expect(updates.contains("version='\(manifest["version"] as? String ?? "?")'"))
    }

    @Test("B1: the XPI is a zip of the Firefox manifest, with the gecko id blockd@blockd.local, and firefox-id says so",
          .enabled(if: Privileged.can(tools: ExtensionPackTests.tools), Privileged.needsTools))
    func xpi() throws {
        if Privileged.unavailable(tools: Self.tools) != nil { return }
        let work = try TempDir(prefix: "bd-pack-")
        let packed = try Self.pack(key: try Self.key(in: work))
        let manifest = try Self.zipManifest(try packed.data("out/blockd.xpi"), in: work)
        let gecko = (manifest["browser_specific_settings"] as? [String: Any])?["gecko"] as? [String: Any]
        #expect(gecko?["id"] as? String == "blockd@blockd.local", "\(manifest)")
        #expect(manifest["manifest_version"] as? Int == 2)
        #expect(try packed.text("out/firefox-id") == "blockd@blockd.local\n")
    }

    @Test("B1: the same sources and key give the same bytes; PREFIX moves only updates.xml's codebase",
          .enabled(if: Privileged.can(tools: ExtensionPackTests.tools), Privileged.needsTools))
    func deterministic() throws {
        if Privileged.unavailable(tools: Self.tools) != nil { return }
        let work = try TempDir(prefix: "bd-pack-")
        let key = try Self.key(in: work)
        let one = try Self.pack(key: key), two = try Self.pack(key: key, prefix: "/usr")
        for name in ["blockd.crx", "blockd.xpi", "chromium-id", "firefox-id"] {
            #expect(try one.data("out/" + name) == two.data("out/" + name), "\(name) differs between two runs")
        }
        let usr = try two.text("out/updates.xml")
        #expect(usr.contains("codebase='file:///usr/share/blockd/browser/blockd.crx'"), "\(usr)")
        #expect(try one.text("out/updates.xml").replacingOccurrences(of: "file:///usr/local/", with: "file:///usr/") == usr)
    }

    @Test("B1: both manifests carry one version, and each language has the same message keys with the same placeholders")
    func sources() throws {
        let chromium = try Self.json(Self.browser + "/chromium/manifest.json")
        let firefox = try Self.json(Self.browser + "/firefox/manifest.json")
        #expect(chromium["version"] as? String != nil)
        #expect(chromium["version"] as? String == firefox["version"] as? String, "browser/chromium and browser/firefox manifests differ in version")
        #expect(chromium["default_locale"] as? String == "en" && firefox["default_locale"] as? String == "en")
        let en = try Self.messages("en"), ja = try Self.messages("ja")
        #expect(Set(en.keys) == Set(ja.keys), "only in en: \(Set(en.keys).subtracting(ja.keys).sorted()); only in ja: \(Set(ja.keys).subtracting(en.keys).sorted())")
        for (key, entry) in en {
            let theirs = ja[key]?["placeholders"] as? [String: Any]
            let ours = entry["placeholders"] as? [String: Any]
            #expect(Set(ours?.keys.map { $0 } ?? []) == Set(theirs?.keys.map { $0 } ?? []), "\(key): placeholders differ between en and ja")
        }
    }

    @Test("B1: every message the manifests, the pages and the scripts use is in the catalogs, and every message is used")
    func messagesUsed() throws {
        let keys = Set(try Self.messages("en").keys)
        var used = Set<String>(), named = Set<String>()
        for file in try Self.sourceFiles() {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for m in text.matches(of: /__MSG_([A-Za-z0-9_@]+)__/) { used.insert(String(m.1)) }
            for m in text.matches(of: /(?:msg|getMessage)\("([A-Za-z0-9_@]+)"/) { used.insert(String(m.1)) }
            for m in text.matches(of: /data-i18n="([^"]+)"/) { used.insert(String(m.1)) }
            // A key picked at run time (msg(moreLabel[kind])) appears as a string literal.
            for m in text.matches(of: /"([A-Za-z][A-Za-z0-9_]*)"/) { named.insert(String(m.1)) }
        }
        #expect(used.count > 20, "read \(used.count) uses")
        #expect(used.subtracting(keys).isEmpty, "used but in no catalog: \(used.subtracting(keys).sorted())")
        let unused = keys.subtracting(used).subtracting(named)
        #expect(unused.isEmpty, "in the catalogs but never used: \(unused.sorted())")
    }

    // MARK: Reading

    /// A CRX3 file (components/crx_file/crx3.proto): its header's fields and the zip.
    struct CRX3 {
        var version: UInt32
        var proofs: [(key: [UInt8], signature: [UInt8])] = []
        var signedHeaderData: [UInt8] = []
        var crxID: [UInt8] = []
        var zip: [UInt8]

        init(_ b: [UInt8]) throws {
            guard b.count > 12, b[0..<4] == Array("Cr24".utf8)[...] else { throw TestFailure("no Cr24 magic") }
            version = ExtensionPackTests.u32(b, 4)
            let length = Int(ExtensionPackTests.u32(b, 8))
            guard 12 + length <= b.count else { throw TestFailure("header length \(length) past the end") }
            zip = Array(b[(12 + length)...])
            for (number, value) in try Protobuf.fields(Array(b[12..<(12 + length)])) {
                switch number {
                case 2:
                    var key: [UInt8] = [], signature: [UInt8] = []
                    for (n, v) in try Protobuf.fields(value) {
                        if n == 1 { key = v } else if n == 2 { signature = v }
                    }
                    proofs.append((key, signature))
                case 10000:
                    signedHeaderData = value
                    for (n, v) in try Protobuf.fields(value) where n == 1 { crxID = v }
                default:
                    throw TestFailure("unexpected header field \(number)")
                }
            }
            guard Array(zip.prefix(4)) == [0x50, 0x4B, 0x03, 0x04] else { throw TestFailure("the archive is not a zip") }
        }
    }

    /// The length-delimited fields of a protobuf message (the only kind CRX3 headers hold).
    enum Protobuf {
        static func fields(_ b: [UInt8]) throws -> [(Int, [UInt8])] {
            var i = 0, out: [(Int, [UInt8])] = []
            func varint() throws -> Int {
                var value = 0, shift = 0
                while true {
                    guard i < b.count, shift < 63 else { throw TestFailure("truncated varint") }
                    let byte = b[i]
                    i += 1
                    value |= Int(byte & 0x7F) << shift
                    if byte & 0x80 == 0 { return value }
                    shift += 7
                }
            }
            while i < b.count {
                let tag = try varint()
                guard tag & 7 == 2 else { throw TestFailure("field \(tag >> 3) has wire type \(tag & 7), not length-delimited") }
                let length = try varint()
                guard i + length <= b.count else { throw TestFailure("field \(tag >> 3) runs past the end") }
                out.append((tag >> 3, Array(b[i..<(i + length)])))
                i += length
            }
            return out
        }
    }

    static func u32(_ b: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[at + $1]) << (8 * $1) }
    }

    static func le32(_ n: Int) -> [UInt8] { (0..<4).map { UInt8((n >> (8 * $0)) & 0xFF) } }

    /// 0-f as a-p: how Chromium writes an ID.
    static func letters(_ bytes: [UInt8]) -> String {
        String(bytes.flatMap { [$0 >> 4, $0 & 0xF] }.map { Character(UnicodeScalar(UInt8(ascii: "a") + $0)) })
    }

    /// Chromium's ID of a DER SubjectPublicKeyInfo: the first 16 bytes of its SHA-256.
    static func chromiumID(publicKey: [UInt8], in dir: TempDir) throws -> String {
        let path = dir.path + "/spki.der"
        try Data(publicKey).write(to: URL(fileURLWithPath: path))
        let digest = try Run.capture(openssl, ["dgst", "-sha256", "-r", path])
        let hex = String(digest.output.prefix(32))
        guard digest.status == 0, hex.count == 32 else { throw TestFailure("openssl dgst: \(digest.output)") }
        return String(hex.map { c in Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(Int(String(c), radix: 16)!))) })
    }

    /// manifest.json of a zip, read by python3's zipfile.
    static func zipManifest(_ zip: [UInt8], in dir: TempDir) throws -> [String: Any] {
        let path = dir.path + "/archive.zip"
        try Data(zip).write(to: URL(fileURLWithPath: path))
        let read = try Run.capture(python, ["-c", "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read('manifest.json').decode())", path])
        guard read.status == 0, let object = try JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [String: Any]
        else { throw TestFailure("manifest.json of the zip: \(read.output)") }
        return object
    }

    static func json(_ path: String) throws -> [String: Any] {
        guard let data = FileManager.default.contents(atPath: path),
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw TestFailure("\(path) is not a JSON object") }
        return object
    }

    static func messages(_ lang: String) throws -> [String: [String: Any]] {
        let object = try json(browser + "/_locales/\(lang)/messages.json")
        return object.compactMapValues { $0 as? [String: Any] }
    }

    /// The manifests and everything under browser/common that is text.
    static func sourceFiles() throws -> [String] {
        let common = try FileManager.default.contentsOfDirectory(atPath: browser + "/common")
            .filter { $0.hasSuffix(".js") || $0.hasSuffix(".html") }.map { browser + "/common/" + $0 }
        return [browser + "/chromium/manifest.json", browser + "/firefox/manifest.json"] + common.sorted()
    }
}
