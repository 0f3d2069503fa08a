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
        let reader = ConfigReader(file: file, what: "a users file")
        let doc = try INIDocument.parse(file: file, text: text)
        let entries = try reader.entries(of: doc, section: usersSection)
        var users: [String] = [], always: [String] = []
        for e in entries {
            switch e.key {
            case "Users": users = try reader.users(e, adding: users)
            case "AlwaysAllowed": always = try reader.selections(e, adding: always)
            default: throw reader.unknownKey(e, section: usersSection, valid: usersKeys)
            }
        }
        guard let header = doc.sections.first else {
            throw CoreError(.invalidConfig, "\(file): has no [\(usersSection)] section; a users file needs one with Users= and AlwaysAllowed=")
        }
        guard !users.isEmpty else { throw reader.fail(header.line, "[\(usersSection)] has no Users=; name whom it is for, e.g. Users=kid or Users=@kids") }
        guard !always.isEmpty else {
            throw reader.fail(header.line, "[\(usersSection)] has no AlwaysAllowed=; name what is always allowed for \(users.joined(separator: ", ")), e.g. AlwaysAllowed=school")
        }
        return UserSettings(users: users, alwaysAllowed: always, file: file)
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
