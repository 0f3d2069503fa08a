import Testing
@testable import BlockCore

/// W2: a per-user `AlwaysAllowed=`, one `users.d/` file each.
@Suite struct UserAlwaysAllowedTests {
    static func users(_ text: String, path: String = "/etc/blockd/users.d/kids.conf") -> ConfigSource {
        ConfigSource(path: path, text: text)
    }

    @Test("W2: a users file is [Users] with Users= and AlwaysAllowed=, lists that add up; each mistake named with file and line",
          arguments: [
              ("[Users]\nUsers=kid\nUsers=@kids\nAlwaysAllowed=school khan\nAlwaysAllowed=school\n", nil),
              ("[Users]\nAlwaysAllowed=school\n", "/etc/blockd/users.d/kids.conf:1: [Users] has no Users=; name whom it is for, e.g. Users=kid or Users=@kids"),
              ("[Users]\nUsers=kid\n", "/etc/blockd/users.d/kids.conf:1: [Users] has no AlwaysAllowed=; name what is always allowed for kid, e.g. AlwaysAllowed=school"),
              ("[Users]\nUsers=kid\nAlwaysAllowed=school\nMode=allow-only\n", "/etc/blockd/users.d/kids.conf:4: Mode= belongs in a schedule file (schedules.d/*.conf, [Schedule]), not in [Users]; move it there"),
              ("[Users]\nUsers=-kid\nAlwaysAllowed=school\n", "/etc/blockd/users.d/kids.conf:2: Users=: '-kid' is not a user name; give a user name such as kid, or a group as @kids"),
              ("# nothing\n", "/etc/blockd/users.d/kids.conf: has no [Users] section; a users file needs one with Users= and AlwaysAllowed="),
          ] as [(String, String?)])
    func parse(text: String, expected: String?) {
        do throws(CoreError) {
            let settings = try ConfigFiles.parseUsers(file: "/etc/blockd/users.d/kids.conf", text: text)
            #expect(expected == nil)
            #expect(settings.users == ["kid", "@kids"] && settings.alwaysAllowed == ["school", "khan"])
        } catch {
            #expect(error.message == expected)
        }
    }

    @Test("W2: users files resolve against the catalog; an unknown selection or an allow-only expression (not a selection name there) is refused with file and line, and the file left out")
    func resolved() {
        let school = ConfigSource(path: "/etc/blockd/selections.d/school.conf", text: "[Selection]\nName=school\nDomains=school.example\n")
        let good = Self.users("[Users]\nUsers=@kids\nAlwaysAllowed=school edu.video.example\n")
        let (set, problems) = ConfigSet.assemble(daemonFile: nil, selectionFiles: [school], scheduleFiles: [], userFiles: [good])
        #expect(problems.isEmpty, "\(problems)")
        #expect(set.userAlwaysAllowed.map(\.users) == [["@kids"]])
        #expect(set.userAlwaysAllowed.first?.selections.map(\.name) == ["school", "edu.video.example"])
        #expect(set.files.contains("/etc/blockd/users.d/kids.conf"))
        for (text, message) in [("[Users]\nUsers=kid\nAlwaysAllowed=nosuch\n", "/etc/blockd/users.d/kids.conf:3: AlwaysAllowed=: no selection named 'nosuch'"),
                                ("[Users]\nUsers=kid\nAlwaysAllowed=only:school\n", "/etc/blockd/users.d/kids.conf:3: AlwaysAllowed=: 'only:school' is not a valid selection name")] {
            let (bad, errors) = ConfigSet.assemble(daemonFile: nil, selectionFiles: [school], scheduleFiles: [], userFiles: [Self.users(text)])
            #expect(errors.first?.message.hasPrefix(message) == true, "\(errors)")
            #expect(bad.userAlwaysAllowed.isEmpty && !bad.files.contains("/etc/blockd/users.d/kids.conf"))
        }
    }

    static let video = Selection(name: "video", domains: ["video.example", "games.example"])
    static let files = [UserAlwaysAllowed(users: ["@kids"], selections: [Selection(name: "edu", domains: ["edu.video.example"])]),
                        UserAlwaysAllowed(users: ["kid2"], selections: [Selection(name: "games.example", domains: ["games.example"])])]
    static func members(_ name: String) -> Set<UInt32> { ["@kids": [1001, 1004], "kid2": [1004]][name] ?? [] }

    @Test("W2: uids are grouped by the users files that name them; each group gets the machine-wide selections and its files'",
          arguments: [
              ([1002], [[1002]], [[]]),
              ([1001], [[1001]], [["edu"]]),
              ([1001, 1002, 1004], [[1002], [1001], [1004]], [[], ["edu"], ["edu", "games.example"]]),
          ] as [([UInt32], [[UInt32]], [[String]])])
    func groups(uids: [UInt32], expected: [[UInt32]], names: [[String]]) {
        let everyone = AlwaysAllowed([])
        let groups = UserAlwaysAllowed.groups(uids, files: Self.files, everyone: everyone, members: Self.members)
        #expect(groups.map(\.uids) == expected)
        #expect(groups.map { $0.always.selections.map(\.name) } == names)
        for (group, named) in zip(groups, names) where named.isEmpty {
            #expect(group.always == everyone, "a uid no file names keeps exactly the machine-wide setting")
        }
    }

    @Test("W2: what a group's files always allow comes out of its block and into its window, on top of the machine-wide")
    func applied() throws {
        let everyone = AlwaysAllowed([Selection(name: "wiki.example", domains: ["wiki.example"])])
        let group = UserAlwaysAllowed.groups([1004], files: Self.files, everyone: everyone, members: Self.members)[0]
        let blocked = group.always.applied(to: Self.video)
        #expect(blocked.domains == ["video.example"] && blocked.exceptions == ["edu.video.example"])
        let window = group.always.applied(to: try Catalog.standard.resolve("only:school.example"))
        #expect(window.allowedHosts == ["school.example", "wiki.example", "edu.video.example", "games.example"])
    }
}
