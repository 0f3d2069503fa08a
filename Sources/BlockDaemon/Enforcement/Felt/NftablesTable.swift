import BlockCore
import CNftables
import Dispatch
import FoundationEssentials
import Glibc

/// E5: what the cut enforcer needs of its firewall table: to hold exactly these rules (and
/// W2's windows), nil on success or the reason it could not. `NftablesTable` on a system; a
/// test's own table elsewhere.
public protocol FirewallTable: AnyObject, Sendable {
    func apply(rules: [CutPlan.Rule], windows: [AllowOnlyNet.Rule]) -> String?
}

/// E5: blockd's own nftables table (`inet blockd`), changed in one atomic transaction through
/// libnftables: element by element while its rules' owners and W2's windows stay the same
/// (`NftScript.delta`), else replaced whole; a change that fails element by element is made
/// whole at once (the table may have been changed behind blockd's back). Nothing else of the
/// ruleset is read or touched.
public final class NftablesTable: FirewallTable, @unchecked Sendable {
    private let ctx: OpaquePointer
    private let lock = Lock()
    /// What the table holds, and how the next change is made (`NftScript.Changes`).
    private var changes = NftScript.Changes()

    /// Nil with the reason when nftables cannot be used here (no libnftables context, no
    /// nf_tables in the kernel, no CAP_NET_ADMIN): blockd then falls back to 0.0.0.0 and ::.
    public static func open() -> (table: NftablesTable?, problem: String?) {
        guard let ctx = nft_ctx_new(UInt32(NFT_CTX_DEFAULT)) else {
            // libnftables is loaded when first called (Sources/CNftables): it may be missing.
            let missing = blockd_nftables_load_error().map { String(cString: $0) }
            return (nil, missing.map { "libnftables cannot be loaded (\($0)); install libnftables1" } ?? "libnftables could not create a context")
        }
        let table = NftablesTable(ctx: ctx)
        if let problem = table.run("list tables") {
            return (nil, "nftables is not usable here (\(problem)); run blockd as root on a kernel with nf_tables")
        }
        return (table, nil)
    }

    private init(ctx: OpaquePointer) {
        self.ctx = ctx
        nft_ctx_buffer_output(ctx)
        nft_ctx_buffer_error(ctx)
    }

    deinit { nft_ctx_free(ctx) }

    /// The table rejecting exactly `addresses` (none: the table removed). Nil on success,
    /// else nft's error text.
    public func apply(rejecting addresses: [IPAddress]) -> String? {
        apply(rules: addresses.isEmpty ? [] : [CutPlan.Rule(addresses: addresses)])
    }

    /// The table holding exactly `rules` (per-user ones matched on the socket owner, `meta
    /// skuid`); no rules: the table removed. Nil on success, else nft's error text.
    /// W2: `windows` follow the rejects (`NftScript.windowLines`).
    public func apply(rules: [CutPlan.Rule], windows: [AllowOnlyNet.Rule] = []) -> String? {
        lock.withLock { changes.apply((rules, windows), run: runLocked) }
    }

    func run(_ script: String) -> String? {
        lock.withLock { runLocked(script) }
    }

    private func runLocked(_ script: String) -> String? {
        let status = nft_run_cmd_from_buffer(ctx, script)
        guard status != 0 else { return nil }
        let error = nft_ctx_get_error_buffer(ctx).map { String(cString: $0) } ?? ""
        let text = error.split(separator: "\n").first.map(String.init) ?? "nft failed with status \(status)"
        return text.isEmpty ? "nft failed with status \(status)" : text
    }
}
