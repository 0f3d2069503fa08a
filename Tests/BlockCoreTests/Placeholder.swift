import Testing
@testable import BlockCore
@Test func smoke() { #expect(CivilDate(year: 1970, month: 1, day: 1).dayNumber == 0) }
