import BlockCore
import FoundationEssentials
import Glibc

/// B1: blockd's own extension in every browser blockd writes policies for. Unlike `blockd.json`
/// (only while something is blocked), its files stay for as long as blockd runs with the
/// extension installed, since web time is counted whether or not anything is blocked: in each
/// Chromium-family browser `policies/managed/blockd-extension.json` (force-installed from the
/// local update manifest) and `native-messaging-hosts/com.blockd.host.json` (the host's
/// manifest, naming the extension's ID); in Firefox, entries merged into `policies.json`
/// (`BrowserPolicies+Firefox.swift`). Taken out at `--release`, or once the extension is
/// turned off (`BrowserExtension=no`) or gone.
extension BrowserPolicyEnforcer {
    /// The extension `setting` (`BrowserExtension=`) names, or why there is none. `auto`:
    /// `share/blockd/browser` beside the directory of the running blockd (`/usr/bin` gives
    /// `/usr/share/blockd/browser`), where `make install` and the package put it.
    static func loadExtension(_ setting: String) -> (BrowserExtension?, String?) {
        if setting == "no" { return (nil, "turned off (BrowserExtension=no)") }
        let directory = setting == "auto" ? automaticExtensionDirectory() : setting
        guard let directory else { return (nil, "the running blockd's own path cannot be read (/proc/self/exe); set BrowserExtension=") }
        guard let id = FileManager.default.contents(atPath: directory + "/chromium-id"),
              let host = FileManager.default.contents(atPath: directory + "/chromium-host.json") else {
            return (nil, "not installed (no \(directory)/chromium-id or chromium-host.json; 'make install' or the package puts it there)")
        }
        do throws(CoreError) {
            return (try BrowserExtension(directory: directory, chromiumID: String(decoding: id, as: UTF8.self), chromiumHost: Array(host)), nil)
        } catch {
            return (nil, error.message)
        }
    }

    static func automaticExtensionDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let exe = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Path.parent(Path.parent(exe)) + "/share/blockd/browser"
    }

    /// The Chromium family's native-messaging directory: beside its `policies` directory.
    static func hostDirectory(_ browser: Browser) -> String {
        String(browser.managed.dropLast("/policies/managed".count)) + "/native-messaging-hosts"
    }

    /// Brings the Chromium-family extension files to what `browsers` (the installed ones, with
    /// policies on) should have: written for those while the extension is here, removed from
    /// every other (and from all once it is not). Called with the lock held.
    func extensionFiles(browsers: [Browser]) -> [EnforcementFailure] {
        var failures: [EnforcementFailure] = []
        let wanted = enabled && browserExtension != nil ? Set(browsers.map(\.name)) : []
        for browser in Self.chromiumFamily {
            let policy = path(browser.managed) + "/" + BrowserExtension.chromiumPolicyFile
            let host = path(Self.hostDirectory(browser)) + "/" + BrowserExtension.hostFile
            do {
                if wanted.contains(browser.name), let browserExtension {
                    try write(browserExtension.chromiumHost, to: host)
                    try write(browserExtension.chromiumDocument, to: policy)
                } else {
                    try remove(policy)
                    try remove(host)
                }
            } catch {
                failures.append(EnforcementFailure(selection: nil, message: "cannot update blockd's browser extension for \(browser.name) (\(policy)): \(error); blockd retries at the next change"))
            }
        }
        return failures
    }
}
