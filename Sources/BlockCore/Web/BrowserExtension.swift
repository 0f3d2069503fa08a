/// B1: blockd's own browser extension, as the managed policies install it: force-installed,
/// so that a member can neither disable nor remove it, from files on this machine, so that no
/// network is needed. Built here as values and bytes; the daemon reads the files and writes.
///
/// The installed directory (`<prefix>/share/blockd/browser`) holds `blockd.crx` (the Chromium
/// family's package) with `updates.xml` (the update manifest its policy points at: Chromium
/// takes a `file://` update URL for a force-installed extension), `chromium-id` (the ID the
/// package's key gives), `chromium-host.json` (the native-messaging manifest for the Chromium
/// family, naming that ID and the host's path) and `blockd.xpi` (Firefox's, unsigned: Firefox
/// ESR installs it once signatures are not required, which the same policy file locks).
public struct BrowserExtension: Equatable, Sendable {
    /// The native-messaging host's name, in both browsers' manifests and the extension.
    public static let hostName = "com.blockd.host"
    /// Firefox's ID for it (its manifest's `browser_specific_settings.gecko.id`).
    public static let firefoxID = "blockd@blockd.local"
    /// The file blockd owns in each Chromium-family `policies/managed/` directory for it, apart
    /// from `blockd.json` (which exists only while something is blocked).
    public static let chromiumPolicyFile = "blockd-extension.json"
    /// The Chromium-family native-messaging manifest's name (in `native-messaging-hosts/`).
    public static let hostFile = hostName + ".json"
    /// Firefox's preference that lets ESR install an unsigned add-on.
    public static let signaturesPreference = "xpinstall.signatures.required"

    /// Where the files are (absolute, no trailing slash).
    public var directory: String
    /// The Chromium ID: 32 letters a to p.
    public var chromiumID: String
    /// `chromium-host.json`'s bytes, copied into each Chromium-family browser's directory of
    /// native-messaging manifests.
    public var chromiumHost: [UInt8]

    public init(directory: String, chromiumID: String, chromiumHost: [UInt8]) throws(CoreError) {
        let id = chromiumID.trimmed()
        guard id.utf8.count == 32, id.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "p")).contains($0) }) else {
            throw CoreError(.invalidConfig, "\(directory)/chromium-id is not an extension ID (32 letters a to p); reinstall blockd's browser files (make install)")
        }
        guard let manifest = try? JSON.parse(bytes: chromiumHost), manifest["name"]?.string == Self.hostName,
              manifest["allowed_origins"]?.array?.contains(.string("chrome-extension://\(id)/")) == true else {
            throw CoreError(.invalidConfig, "\(directory)/chromium-host.json is not the native-messaging manifest of \(Self.hostName) for extension \(id); reinstall blockd's browser files (make install)")
        }
        (self.directory, self.chromiumID, self.chromiumHost) = (directory.hasSuffix("/") ? String(directory.dropLast()) : directory, id, chromiumHost)
    }

    /// A path as the `file://` URL the browsers fetch it from.
    func url(_ name: String) -> String {
        "file://" + (directory + "/" + name).split(separator: "/", omittingEmptySubsequences: false).map { PercentEncoding.encode(String($0)) }.joined(separator: "/")
    }

    /// The Chromium family's policy file: the extension force-installed from the local update
    /// manifest (with its toolbar button pinned), and its native-messaging host allowed even
    /// where an administrator blocks native messaging.
    public var chromiumDocument: [UInt8] {
        let settings: JSONObject = [chromiumID: .object(["installation_mode": "force_installed", "update_url": .string(url("updates.xml")),
                                                         "toolbar_pin": "force_pinned"])]
        let json: JSONObject = ["ExtensionSettings": .object(settings), "NativeMessagingAllowlist": [.string(Self.hostName)]]
        return Array((JSON.object(json).prettyPrinted() + "\n").utf8)
    }

    /// Firefox's `ExtensionSettings` entry: force-installed from the local file, allowed in
    /// private windows.
    public var firefoxEntry: JSON {
        .object(["installation_mode": "force_installed", "install_url": .string(url("blockd.xpi")), "private_browsing": true])
    }

    /// Firefox's `Preferences` entry that lets ESR install it unsigned, locked.
    public static let firefoxSignatures: JSON = .object(["Value": false, "Status": "locked"])
}
