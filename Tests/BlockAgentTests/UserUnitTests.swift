import Foundation
import Testing
import BlockTestTools

/// The agent's user unit and autostart entry (S1: the agent runs in the user's session).
@Suite struct UserUnitTests {
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()
    static let analyze = "/usr/bin/systemd-analyze", man = "/usr/bin/man"

    @Test("blockd-agent.service passes systemd-analyze --user verify with ExecStart pointing at the built blockc", .enabled(if: Desktop.can(needs: [UserUnitTests.analyze, UserUnitTests.man]), Desktop.needsPrograms))
    func verify() throws {
        if Desktop.unavailable(needs: [UserUnitTests.analyze, UserUnitTests.man]) != nil { return }
        let session = try DesktopSession()
        let unit = try String(contentsOfFile: UserUnitTests.root + "/systemd/user/blockd-agent.service", encoding: .utf8)
            .replacingOccurrences(of: "ExecStart=/usr/local/bin/blockc", with: "ExecStart=\(Repo.binDir)/blockc")
        try FileManager.default.createDirectory(atPath: session.dir + "/units", withIntermediateDirectories: true)
        try session.write(unit, to: "units/blockd-agent.service")
        // Documentation= is checked with man(1): give it this checkout's pages.
        for (section, page) in [("man1", "blockc.1"), ("man5", "blockd.conf.5")] {
            try FileManager.default.createDirectory(atPath: "\(session.dir)/man/\(section)", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: "\(session.dir)/man/\(section)/\(page)", withDestinationPath: "\(UserUnitTests.root)/man/\(page)")
        }
        let r = try Run.capture(UserUnitTests.analyze, ["--user", "verify", session.dir + "/units/blockd-agent.service"],
                                 environment: ["XDG_RUNTIME_DIR": session.dir, "MANPATH": session.dir + "/man"])
        #expect(r.status == 0 && !r.output.contains("blockd-agent"), "\(r.output)")
    }

    @Test("the autostart entry and the unit run the same command")
    func sameCommand() throws {
        let unit = try String(contentsOfFile: UserUnitTests.root + "/systemd/user/blockd-agent.service", encoding: .utf8)
        let desktop = try String(contentsOfFile: UserUnitTests.root + "/systemd/user/blockd-agent.desktop", encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/local/bin/blockc watch --notify\n"))
        #expect(desktop.contains("\nExec=/usr/local/bin/blockc watch --notify\n"))
        #expect(desktop.hasPrefix("[Desktop Entry]\n") && desktop.contains("\nType=Application\n"))
    }
}
