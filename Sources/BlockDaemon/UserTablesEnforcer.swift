import BlockCore
import Foundation

/// Websites per user: the domains of selections blocked for some users only go to those
/// users' tables under /run/blockd/users (`UserTables`), which libnss_blockd.so.2 reads; the
/// hosts file keeps the machine-wide ones. A table that cannot be written leaves its
/// selections not enforced (DESIGN §7 "Truth"): the block is accepted, and every later
/// reconcile tries again.
public final class UserTablesEnforcer: Enforcer, @unchecked Sendable {
    public let mode = "nss"
    let tables: UserTables
    /// Whether a table was ever written (or may be left from an earlier run): without per-user
    /// blocks and without tables there is nothing to do, not even the directory to create.
    var mayHoldTables: Bool

    public init(directory: String = UserTable.directory) {
        tables = UserTables(directory: directory)
        mayHoldTables = FileManager.default.fileExists(atPath: directory)
    }

    /// uid → the valid domains of the selections blocked for that uid only.
    static func tables(for blocked: [Selection]) -> [UInt32: [String]] {
        var out: [UInt32: [String]] = [:]
        for selection in blocked {
            guard let users = selection.users else { continue }
            let domains = selection.domains.compactMap { try? Domain.normalize($0) }  // the hosts enforcer's rule (E1)
            for uid in users where !domains.isEmpty { out[uid, default: []] += domains }
        }
        return out
    }

    public func enforce(blocked: [Selection]) -> EnforcementReport {
        let wanted = UserTablesEnforcer.tables(for: blocked)
        var report = EnforcementReport()
        guard mayHoldTables || !wanted.isEmpty else { return report }
        mayHoldTables = true
        do throws(AtomicFile.Failure) {
            try tables.apply(wanted)
        } catch {
            let message = "cannot write the per-user tables in \(tables.directory): \(error)"
            report.failures.append(EnforcementFailure(selection: nil, message: message))
            for selection in blocked where selection.users != nil && !selection.domains.isEmpty {
                report.notEnforced(selection.name, message)
            }
        }
        return report
    }

    public func release() -> [EnforcementFailure] {
        guard FileManager.default.fileExists(atPath: tables.directory) else { return [] }
        do throws(AtomicFile.Failure) { try tables.apply([:]) } catch {
            return [EnforcementFailure(selection: nil, message: "cannot remove the per-user tables in \(tables.directory): \(error)")]
        }
        return []
    }
}
