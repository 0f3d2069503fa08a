/// The listings (§6): `schedule list`, `limit list`, `selections` and `failures` answer one
/// array under one key (`Listing`, also what blockc's `--json` prints of the answer). The daemon
/// writes each with `ListReply.json` and blockc reads it with `ListReply(_:from:)`, so each key is
/// spelled once, here; the items are the objects of Replies.swift. Lenient, as a reader of
/// another version must be: an item that is not an object is skipped.
public enum Listing: String, Sendable {
    /// Of `ActivityReply`s.
    case schedules, limits
    /// Of `SelectionReply`s.
    case selections
    /// Of `FailureReply`s, oldest first (for a member, A1, their own and the daemon's).
    case failures
}

/// An object of a listing: written by `json`, read by a lenient `init(_:)`.
public protocol ListItem: Equatable, Sendable {
    var json: JSONObject { get }
    init(_ o: JSONObject)
}

extension ActivityReply: ListItem {}
extension SelectionReply: ListItem {}
extension FailureReply: ListItem {}

/// One listing's answer: its items under its key.
public struct ListReply<Item: ListItem>: Equatable, Sendable {
    public var listing: Listing
    public var items: [Item]

    public init(_ listing: Listing, _ items: [Item]) { (self.listing, self.items) = (listing, items) }

    public init(_ listing: Listing, from o: JSONObject) {
        self.init(listing, Reply.objects(o[listing.rawValue]).map(Item.init))
    }

    public var json: JSONObject { [listing.rawValue: .array(items.map { .object($0.json) })] }
}

/// `selections show NAME`: one selection. An answer without the container (an older daemon's)
/// is read as the selection itself.
public struct SelectionShowReply: Equatable, Sendable {
    /// The answer's one member (and what `--json` prints of it).
    public static let key = "selection"
    public var selection: SelectionReply

    public init(selection: SelectionReply) { self.selection = selection }

    public var json: JSONObject { [Self.key: .object(selection.json)] }

    public init(_ o: JSONObject) { selection = SelectionReply(o[Self.key]?.object ?? o) }
}
