import Foundation
import Testing
import BlockTestTools

/// Each library target opens with a short module doc, `Sources/<Target>/<Target>.swift`: what
/// it owns and what it may import. The "May import:" line is checked against every file of the
/// target, so the direction of the dependencies (BlockCore imports nothing of ours, only
/// BlockDaemon links the kernel shims) is written down once and cannot drift.
@Suite("Module docs: what each target owns and may import")
struct ModuleDocsTests {
    static let targets = ["BlockCore", "BlockDaemon", "BlockClient", "BlockAgent", "BlockBus", "ZoneInfo"]

    /// The modules a line imports (`import X`, `@preconcurrency import X`, `import struct X.Y`).
    static func imported(in text: String) -> Set<String> {
        Set(text.split(separator: "\n").compactMap { line -> String? in
            line.firstMatch(of: /^\s*(?:@[A-Za-z_]+\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)/)
                .map { String($0.1) }
        })
    }

    @Test("every target's files import only what its module doc allows", arguments: ModuleDocsTests.targets)
    func imports(target: String) throws {
        let doc = try String(contentsOfFile: "\(Repo.root)/Sources/\(target)/\(target).swift", encoding: .utf8)
        let line = try #require(doc.split(separator: "\n").first { $0.hasPrefix("// May import: ") }, "no May import: line")
        let allowed = Set(line.dropFirst("// May import: ".count).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(doc.split(separator: "\n").allSatisfy { $0.isEmpty || $0.hasPrefix("//") }, "the module doc is comments only")
        var used: Set<String> = []
        for file in try DocsTests.files(under: "Sources/\(target)") where file.hasSuffix(".swift") {
            let found = Self.imported(in: try String(contentsOfFile: Repo.root + "/" + file, encoding: .utf8))
            used.formUnion(found)
            for module in found.subtracting(allowed) {
                Issue.record("\(file) imports \(module), which \(target)'s module doc does not allow; import it through a target that may, or say why in Sources/\(target)/\(target).swift")
            }
        }
        #expect(allowed.subtracting(used).isEmpty, "allowed but imported nowhere (drop them from the doc): \(allowed.subtracting(used).sorted())")
    }

    /// The types a file declares as errors (`struct X: Error`, `enum Y: Equatable, Error`).
    static func errorTypes(in text: String) -> [String] {
        text.matches(of: /(?:struct|enum|class)\s+([A-Za-z_][A-Za-z0-9_]*)\s*:[^{\n]*\bError\b/).map { String($0.1) }
    }

    @Test("each layer has one error type: a failure is said one way (add a case there, not a new type)",
          arguments: [("BlockCore", "CoreError.swift: CoreError"), ("BlockDaemon", "DaemonError.swift: DaemonError"),
                      ("BlockClient", "ControlConnection.swift: ClientError"), ("BlockAgent", "AgentError.swift: AgentError"),
                      ("BlockBus", "BusError.swift: BusError")])
    func oneErrorType(_ target: String, _ only: String) throws {
        var found: [String] = []
        for file in try DocsTests.files(under: "Sources/" + target) where file.hasSuffix(".swift") {
            found += Self.errorTypes(in: try String(contentsOfFile: Repo.root + "/" + file, encoding: .utf8)).map { "\(file): \($0)" }
        }
        #expect(found == ["Sources/\(target)/\(only)"], "throw the layer's error type (add a case there) instead of a new one")
        #expect(Self.errorTypes(in: "struct Failure: Error {}\nenum E: Equatable, Sendable, Error {\nstruct NotOne: Equatable {}") == ["Failure", "E"])
    }

    @Test("the import reader finds what a file imports")
    func reader() {
        #expect(Self.imported(in: "import Glibc\n@preconcurrency import CSystemd\nimport struct Foo.Bar\n// import Nope\nlet importX = 1") == ["Glibc", "CSystemd", "Foo"])
    }
}
