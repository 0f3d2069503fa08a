import Testing
@testable import BlockCore

/// W2: allow-only time as the selection expression `only:…`.
@Suite struct AllowOnlyTests {
    @Test("W2: only:a,b resolves to one canonical selection that allows the resolved parts")
    func resolves() throws {
        let s = try Catalog.standard.resolve("only:YouTube,https://www.school.example/,wiki.example/math")
        #expect(s.name == "only:school.example,wiki.example/math,youtube")
        #expect(s.isAllowOnly && s.domains.isEmpty && s.apps.isEmpty && s.paths.isEmpty, "it blocks through `allowed` alone")
        #expect(s.allowed?.map(\.name) == ["school.example", "wiki.example/math", "youtube"])
        #expect(s.allowedHosts.isSuperset(of: ["school.example", "wiki.example", "youtube.com", "www.youtube.com"]))
        let again = try Catalog.standard.resolve("only:wiki.example/math,school.example,youtube,youtube")
        #expect(again == s, "the same allowed set in any order, repeats dropped, is the same selection")
        #expect(try Catalog.standard.resolve(s.name) == s, "the canonical name resolves to itself (the engine resolves it at every change)")
    }

    @Test("W2: an expression that allows nothing, nests, or names what does not exist is refused, saying why", arguments: [
        ("only:", "allows nothing"), ("only:a,,b", "empty part"), ("only:school.example,only:x.example", "inside an allow-only expression"),
        ("only:nosuchthing", "no selection named 'nosuchthing'"), ("only:bad_host.example", "is not a domain"),
        ("only:" + (0...64).map { "s\($0).example" }.joined(separator: ","), "1 to 64"),
    ])
    func refused(_ expression: String, _ why: String) {
        #expect(throws: CoreError.self) { try Catalog.standard.resolve(expression) }
        do { _ = try Catalog.standard.resolve(expression) } catch {
            #expect(error.message.contains(why), "\(error.message)")
        }
    }

    @Test("W2: a limit cannot allow only some things; it counts app time")
    func limitRefused() {
        let limit = Limit(name: "l", selections: ["only:school.example"], seconds: 3600)
        #expect(throws: CoreError.self) { try limit.validate() }
    }

    @Test("W2: Mode=allow-only makes Selections= what stays allowed; another Mode is refused with the two it takes")
    func scheduleMode() throws {
        let s = try ConfigFiles.parseSchedule(file: "f", text: "[Schedule]\nName=homework\nWindow=16:00-18:00\nMode=allow-only\nSelections=school editor\n")
        #expect(s.selections == ["only:school,editor"])
        let plain = try ConfigFiles.parseSchedule(file: "f", text: "[Schedule]\nName=b\nWindow=22:00-07:00\nMode=block\nSelections=social\n")
        #expect(plain.selections == ["social"])
        #expect(throws: CoreError.self) {
            try ConfigFiles.parseSchedule(file: "f", text: "[Schedule]\nName=b\nWindow=22:00-07:00\nMode=allow\nSelections=social\n")
        }
    }

    @Test("W2: the default block name of an allow-only start is a valid name")
    func defaultName() throws {
        let name = Names.blockName(for: ["only:editor,school"])
        #expect(name == "only_editor_school")
        try Names.validate(name, what: "block name")
    }
}
