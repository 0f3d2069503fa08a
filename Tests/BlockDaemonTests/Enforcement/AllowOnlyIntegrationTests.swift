import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
import BlockTestTools

/// W2 through the real binaries: `blockc start --allow-only`, what status says, the tables.
@Suite("W2: allow-only time through blockc and blockd")
struct AllowOnlyIntegrationTests {
    @Test("W2: start --allow-only blocks everything but the named sites: status, the `all` table, the journal; stop lifts it")
    func startAndStop() throws {
        let s = Sandbox()
        try s.start()
        let started = try s.blockc(["start", "--for", "10m", "--allow-only", "https://www.school.example/", "wiki.example"])
        #expect(started.status == 0, "\(started.err)")
        #expect(started.out.contains("everything but school.example, wiki.example"), "\(started.out)")
        #expect(started.err.contains("read 'https://www.school.example/' as the site school.example"))
        let status = try s.blockc(["status"])
        #expect(status.out.contains("everything but school.example, wiki.example"), "\(status.out)")
        let json = try s.status()
        #expect(json["blocked"]?.array?.first?["selection"]?.string == "only:school.example,wiki.example")
        #expect(json["enforcement"]?["applied"]?.array?.contains(.string("only:school.example,wiki.example")) == true, "\(json)")
        let table = Array(FileManager.default.contents(atPath: s.userTablesDir + "/all") ?? Data())
        #expect(UserTable.allowed(in: table) == ["school.example", "wiki.example"], "\(String(decoding: table, as: UTF8.self))")
        #expect(s.log.contains("Blocked everything but school.example, wiki.example"), "\(s.log)")
        let stopped = try s.blockc(["stop", "only_school.example_wiki.example"])
        #expect(stopped.status == 0, "\(stopped.err)")
        #expect(Run.eventually(timeout: 5) { !FileManager.default.fileExists(atPath: s.userTablesDir + "/all") })
    }

    @Test("W2: AlwaysAllowed= keeps a site out of every block and in every window, through the real daemon")
    func alwaysAllowed() throws {
        let s = Sandbox()
        s.write("[Daemon]\nAlwaysAllowed=wiki.example edu.video.example\n", to: "etc/blockd.conf")
        s.write("[Selection]\nName=distractions\nDomains=wiki.example video.example games.example\n", to: "etc/selections.d/distractions.conf")
        try s.start()
        #expect(try s.blockc(["start", "--for", "10m", "distractions"]).status == 0)
        let hosts = HostsFile.blockedDomains(in: Array(FileManager.default.contents(atPath: s.hostsPath) ?? Data()))
        #expect(hosts.contains("video.example") && hosts.contains("games.example") && !hosts.contains("wiki.example"), "\(hosts)")
        let all = String(decoding: FileManager.default.contents(atPath: s.userTablesDir + "/all") ?? Data(), as: UTF8.self)
        #expect(all.contains("\nvideo.example\n") && all.contains("\n!edu.video.example\n") && !all.contains("\nwiki.example"), "\(all)")
        #expect(try s.blockc(["start", "--for", "10m", "--allow-only", "school.example"]).status == 0)
        let window = Array(FileManager.default.contents(atPath: s.userTablesDir + "/all") ?? Data())
        #expect(UserTable.allowed(in: window) == ["edu.video.example", "school.example", "wiki.example"], "\(String(decoding: window, as: UTF8.self))")
    }

    @Test("W2: schedule add --allow-only is a window of allow-only time; a limit cannot allow only")
    func scheduleAndLimit() throws {
        let s = Sandbox()
        try s.start()
        let added = try s.blockc(["schedule", "add", "homework", "--daily", "16:00-18:00", "--allow-only", "school.example"])
        #expect(added.status == 0, "\(added.err)")
        #expect(try s.blockc(["schedule", "list", "--json"]).out.contains("only:school.example"))
        let limit = try s.blockc(["limit", "add", "l", "1h", "only:school.example"])
        #expect(limit.status != 0 && limit.err.contains("cannot allow only some things"), "\(limit.err)")
    }
}
