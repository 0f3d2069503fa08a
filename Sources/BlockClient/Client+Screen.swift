import BlockCore
import FoundationEssentials

/// `blockc screen --pam`: the account check pam_exec runs at a login (`account required
/// pam_exec.so quiet stdout BINDIR/blockc screen --pam`, the `blockd-screen` profile of
/// pam-auth-update). It asks blockd about `PAM_USER`: kept off the screen (allowed hours, or a
/// screen-time limit used up today) refuses the login (status 1) with one line the login
/// shows; anything else lets it through (status 0). It fails open: without an answer from
/// blockd (not running, a broken socket, an unknown user) nobody is refused, and root never
/// is, so a broken blockd cannot lock everyone out. Only a login to the screen is checked:
/// remote ones (`PAM_RHOST`, as ssh sessions are not screen time) and the services that open
/// no session at the screen (cron, at, a user's systemd, sudo, su, runuser, polkit) go through.
extension BlockcRunner {
    static let pamBackground: Set<String> = ["cron", "atd", "systemd-user", "sudo", "sudo-i", "su", "su-l", "runuser", "runuser-l", "polkit-1", "sshd"]

    func pamAccount(path: String) -> Int32 {
        guard let user = environment["PAM_USER"], !user.isEmpty, user != "root",
              environment["PAM_TYPE"].map({ $0 == "account" }) ?? true,
              environment["PAM_RHOST"]?.isEmpty ?? true,
              !BlockcRunner.pamBackground.contains(environment["PAM_SERVICE"] ?? "") else { return BlockcRunner.ok }
        guard let transport = try? connect(path) else { return BlockcRunner.ok }
        defer { transport.close() }
        guard case .ok(let o)? = try? transport.send(.screen(view: .user(user))) else { return BlockcRunner.ok }
        let r = ScreenReply(o)
        guard r.held, r.uid != 0 else { return BlockcRunner.ok }
        _ = stdout(output.screen(r) + "\n")
        return BlockcRunner.refused
    }
}
