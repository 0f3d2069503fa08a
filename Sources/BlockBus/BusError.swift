import Glibc

/// An sd-bus failure: the D-Bus error name when a peer sent one (`org.freedesktop.DBus.Error…`),
/// else what failed and the errno's text.
public struct BusError: Error, Equatable, CustomStringConvertible {
    public var name: String?
    public var message: String

    public init(name: String?, message: String) {
        (self.name, self.message) = (name, message)
    }

    /// A negative return from sd-bus is `-errno`.
    public init(_ rc: Int32, _ what: String) {
        self.init(name: nil, message: "\(what): \(String(cString: strerror(-rc)))")
    }

    public var description: String { name.map { "\($0): \(message)" } ?? message }

    /// Nobody owns the name and nothing can activate it: no such service on the bus.
    public var isNoServer: Bool {
        name == "org.freedesktop.DBus.Error.ServiceUnknown" || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
    }
}
