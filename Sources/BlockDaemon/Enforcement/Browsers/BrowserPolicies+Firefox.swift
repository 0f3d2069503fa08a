import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// E7 for Firefox: `DNSOverHTTPS` locked off in `policies.json`, merged at every apply and by
/// `make install` (`blockd --merge-firefox-policies`), taken out at `--release`; W3:
/// `DisablePrivateBrowsing: true` while anything machine-wide is blocked. What the
/// administrator's file held before is kept in the state directory, so that their own values
/// come back exactly and a file blockd created is removed again.
extension BrowserPolicyEnforcer {
    /// Merges at every apply, writing only when the bytes change; a failure is reported and
    /// retried at the next apply.
    func mergeFirefox(closePrivate: Bool) -> EnforcementFailure? {
        guard firefoxInstalled else { return nil }
        do {
            let existing = FileManager.default.contents(atPath: firefoxPath).map { Array($0) }
            let kept = loadRecord()
            let merged = try FirefoxPolicies.merge(existing, record: kept, closePrivate: closePrivate,
                                                   browserExtension: enabled ? browserExtension : nil, file: firefoxPath)
            // The record is saved before the file changes while it gains what the file is about
            // to lose (a crash in between leaves a record of the original, never a changed file
            // without one), and after it when W3 is lifted: a crash in between then leaves the
            // old record, which puts the same value back at the next apply.
            let lifting = merged.record.lifts(from: kept)
            if merged.record != kept && !lifting { try saveRecord(merged.record) }
            if let bytes = merged.bytes { try write(bytes, to: firefoxPath) }
            if merged.record != kept && lifting { try saveRecord(merged.record) }
            firefoxDone = true
            firefoxPrivateClosed = merged.record.privateBrowsing != nil
            return nil
        } catch let error as CoreError {
            return EnforcementFailure(selection: nil, message: "cannot update Firefox's policies (DNS over HTTPS off, private windows closed while blocked, blockd's extension): \(error.message)")
        } catch {
            return EnforcementFailure(selection: nil, message: "cannot update Firefox's policies (DNS over HTTPS off, private windows closed while blocked, blockd's extension) in \(firefoxPath): \(error)")
        }
    }

    func saveRecord(_ record: FirefoxPolicies.Record) throws {
        let entry: JSON = ["path": .string(firefoxPath), "record": record.json]
        try AtomicFile.write(Data((entry.serialized() + "\n").utf8), to: recordPath, mode: 0o600)
    }

    /// Takes blockd's keys out again (`--release`).
    func restoreFirefox() -> EnforcementFailure? {
        guard let data = FileManager.default.contents(atPath: firefoxPath) else {
            unlink(recordPath)
            firefoxPrivateClosed = false
            return nil
        }
        do {
            switch try FirefoxPolicies.restore(Array(data), record: loadRecord(), file: firefoxPath) {
            case .unchanged: break
            case .rewrite(let bytes): try write(bytes, to: firefoxPath)
            case .remove: try remove(firefoxPath)
            }
            unlink(recordPath)
            firefoxPrivateClosed = false
            return nil
        } catch let error as CoreError {
            return EnforcementFailure(selection: nil, message: "cannot restore Firefox's policies: \(error.message)")
        } catch {
            return EnforcementFailure(selection: nil, message: "cannot restore Firefox's policies in \(firefoxPath): \(error)")
        }
    }

    /// The record for this very file (a record for another path says nothing about it).
    func loadRecord() -> FirefoxPolicies.Record? {
        guard let data = FileManager.default.contents(atPath: recordPath),
              let json = try? JSON.parse(bytes: Array(data)), json["path"]?.string == firefoxPath,
              let record = json["record"] else { return nil }
        return FirefoxPolicies.Record(json: record)
    }
}

extension BlockdMain {
    /// `blockd --merge-firefox-policies` (make install): the merge blockd does at its start.
    static func mergeFirefoxPolicies(_ options: BlockdOptions) -> Int32 {
        let daemon = (try? options.configDirectory.load(flags: flags(options)))?.daemon
            ?? DaemonConfig.defaults.applying(flags(options))
        let browsers = BrowserPolicyEnforcer(config: daemon, stateDir: options.stateDir, log: StderrSink())
        guard browsers.enabled else {
            print("Browser policies are turned off (BrowserPolicies=no); Firefox's policies were left alone.")
            return 0
        }
        guard browsers.firefoxInstalled else {
            print("Firefox is not installed; nothing to merge.")
            return 0
        }
        if mkdir(options.stateDir, 0o755) != 0 && errno != EEXIST {
            printError("blockd: cannot create the state directory \(options.stateDir): \(String(cString: strerror(errno)))")
            return 1
        }
        // W3 stays as the daemon left it: a block in force keeps private windows closed.
        if let failure = browsers.mergeFirefox(closePrivate: browsers.loadRecord()?.privateBrowsing != nil) {
            printError("blockd: \(failure.message)")
            return 1
        }
        print("Firefox's \(browsers.firefoxPath) locks DNS over HTTPS off (read when Firefox starts).")
        return 0
    }
}
