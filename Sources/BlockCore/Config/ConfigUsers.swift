/// W2: settings for some users, one file of `users.d/` each: a `[Users]` section with
/// `Users=` (user names and `@group`s, as a schedule's) and `AlwaysAllowed=` (selections no
/// block for those users alone ever covers, and every window of theirs allows).
///
/// The names stay names here; the daemon resolves them to uids each time it enforces, so a
/// user added to a group counts from the next change.
public struct UserSettings: Equatable, Sendable {
    public var users: [String]
    public var alwaysAllowed: [String]
    public var file: String

    public init(users: [String], alwaysAllowed: [String], file: String) {
        (self.users, self.alwaysAllowed, self.file) = (Registry.unique(users), Registry.unique(alwaysAllowed), file)
    }
}

extension ConfigFiles {
    public static let usersSection = "Users"
    public static let usersKeys = ["Users", "AlwaysAllowed"]

    /// Reads one file of `users.d/`: `[Users]` with `Users=` and `AlwaysAllowed=`, both
    /// required, both lists that may repeat (an empty assignment empties it).
    public static func parseUsers(file: String, text: String) throws(CoreError) -> UserSettings {
        let (settings, problems) = readUsers(file: file, text: text)
        if let first = problems.first { throw first.error }
        return settings!
    }

    /// `parseUsers`, with every problem of the file, by line (§7); nil when there is any.
    public static func readUsers(file: String, text: String) -> (UserSettings?, [ConfigProblem]) {
        let reader = ConfigReader(file: file, what: "a users file")
        var list = ProblemList()
        let (doc, malformed) = INIDocument.read(file: file, text: text)
        list.errors = malformed
        let (entries, misplaced) = reader.entries(of: doc, section: usersSection, problems: &list.errors)
        var users: [String] = [], always: [String] = []
        for e in entries {
            list.check(e) { () throws(CoreError) in
                switch e.key {
                case "Users": users = try reader.users(e, adding: users)
                case "AlwaysAllowed": always = try reader.selections(e, adding: always)
                default: throw reader.unknownKey(e, section: usersSection, valid: usersKeys)
                }
            }
        }
        if doc.sections.isEmpty {
            if malformed.isEmpty {
                list.errors.append(CoreError(.invalidConfig, "\(file): has no [\(usersSection)] section; a users file needs one with Users= and AlwaysAllowed="))
            }
        } else if !misplaced {
            let header = doc.sections[0].line
            if users.isEmpty, !list.refused.contains("Users") {
                list.errors.append(reader.fail(header, "[\(usersSection)] has no Users=; name whom it is for, e.g. Users=kid or Users=@kids"))
            }
            if always.isEmpty, !list.refused.contains("AlwaysAllowed") {
                let whom = users.isEmpty ? "them" : users.joined(separator: ", ")
                list.errors.append(reader.fail(header, "[\(usersSection)] has no AlwaysAllowed=; name what is always allowed for \(whom), e.g. AlwaysAllowed=school"))
            }
        }
        let problems = list.problems(file: file)
        guard problems.isEmpty else { return (nil, problems) }
        return (UserSettings(users: users, alwaysAllowed: always, file: file), [])
    }
}

/// W2: one `users.d/` file resolved against the catalog: its names (`kid`, `@kids`) and the
/// selections always allowed for them.
public struct UserAlwaysAllowed: Equatable, Sendable {
    public var users: [String]
    public var selections: [Selection]

    public init(users: [String], selections: [Selection]) {
        (self.users, self.selections) = (users, selections)
    }

    /// A selection enforced for `uids` alone, as enforced for each of them: the uids grouped by
    /// the files that name them (`members(name)` gives a name's uids), each group with what the
    /// machine-wide `everyone` and those files always allow. One group, with `everyone` alone,
    /// when no file names any of them.
    public static func groups(_ uids: [UInt32], files: [UserAlwaysAllowed], everyone: AlwaysAllowed,
                              members: (String) -> Set<UInt32>) -> [(uids: [UInt32], always: AlwaysAllowed)] {
        let named = files.map { file in file.users.reduce(into: Set<UInt32>()) { $0.formUnion(members($1)) } }
        var byFiles: [[Int]: [UInt32]] = [:]
        for uid in Set(uids) { byFiles[named.indices.filter { named[$0].contains(uid) }, default: []].append(uid) }
        return byFiles.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { indices, group in
            var selections = everyone.selections
            for s in indices.flatMap({ files[$0].selections }) where !selections.contains(where: { $0.name == s.name }) { selections.append(s) }
            return (group.sorted(), indices.isEmpty ? everyone : AlwaysAllowed(selections))
        }
    }
}
