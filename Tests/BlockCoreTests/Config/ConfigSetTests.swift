import Testing
@testable import BlockCore

@Suite("§7: a configuration is loaded as one")
struct ConfigSetTests {
    let social = ConfigSource(path: "/etc/blockd/selections.d/social.conf",
                              text: "[Selection]\nName=social\nDomains=example.com www.example.com\nOpenURL=https://minulo.app/\n")
    let bedtime = ConfigSource(path: "/etc/blockd/schedules.d/bedtime.conf",
                               text: "[Schedule]\nName=bedtime\nWindow=22:00-07:00\nSelections=social Instagram\n")

    @Test("no files at all: built-in defaults and the built-in catalog")
    func builtIn() throws {
        let c = try ConfigSet.load(daemonFile: nil, selectionFiles: [], scheduleFiles: [])
        #expect(c.daemon == .defaults)
        #expect(c.catalog.names == Catalog.standard.names)
        #expect(c.schedules.isEmpty)
        #expect(c.catalog.selection(named: "instagram") != nil)
    }

    @Test("defaults, then the file, then flags")
    func layers() throws {
        let file = ConfigSource(path: "/etc/blockd/blockd.conf", text: "[Daemon]\nMaxActivities=50\nHostsFile=/etc/hosts.blockd\n")
        let c = try ConfigSet.load(daemonFile: file, selectionFiles: [], scheduleFiles: [], flags: .init(hostsFile: "/tmp/hosts"))
        #expect(c.daemon.maxActivities == 50)
        #expect(c.daemon.hostsFile == "/tmp/hosts")
        #expect(c.daemon.killGraceSeconds == 3)
    }

    @Test("configured selections join the catalog; schedules resolve their selections")
    func selectionsAndSchedules() throws {
        let c = try ConfigSet.load(daemonFile: nil, selectionFiles: [social], scheduleFiles: [bedtime])
        #expect(c.catalog.selection(named: "social")?.domains == ["example.com", "www.example.com"])
        #expect(c.schedules.map(\.name) == ["bedtime"])
        #expect(c.schedules[0].selections == ["social", "instagram"])
        #expect(c.schedules[0].origin == .config(file: bedtime.path))
        #expect(c.files == [social.path, bedtime.path])
    }

    @Test("a schedule naming an unknown selection is an error naming its file, with a suggestion")
    func unknownSelection() {
        let bad = ConfigSource(path: "/etc/blockd/schedules.d/x.conf", text: "[Schedule]\nName=x\nWindow=01:00-02:00\nSelections=instagarm\n")
        do {
            _ = try ConfigSet.load(daemonFile: nil, selectionFiles: [], scheduleFiles: [bad])
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidConfig)
            #expect(error.message.hasPrefix(bad.path))
            #expect(error.message.contains("did you mean 'instagram'"))
        }
    }

    @Test("the same selection or schedule name in two files is an error naming both")
    func duplicates() {
        let twin = ConfigSource(path: "/etc/blockd/selections.d/twin.conf", text: "[Selection]\nName=Social\nDomains=a.example\n")
        do { _ = try ConfigSet.load(daemonFile: nil, selectionFiles: [social, twin], scheduleFiles: []) } catch {
            #expect(error.message.contains("social.conf") && error.message.contains("twin.conf"))
        }
        let twin2 = ConfigSource(path: "/etc/blockd/schedules.d/zz.conf", text: bedtime.text)
        do { _ = try ConfigSet.load(daemonFile: nil, selectionFiles: [social], scheduleFiles: [twin2, bedtime]) } catch {
            #expect(error.message.contains("bedtime.conf") && error.message.contains("zz.conf"))
        }
    }
}
