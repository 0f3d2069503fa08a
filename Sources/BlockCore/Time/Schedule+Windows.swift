import FoundationEssentials

/// Schedule windows in local civil time.
///
/// - T2: equal start and end (`13:05-13:05`) is a 24-hour window, ending at the same wall
///   time the next day.
/// - T3: an end at or before the start ends on the next day; the weekday set applies to the
///   day the window starts.
/// - T7: boundaries resolve through `LocalClock` (gap → first valid instant after it, overlap
///   → first occurrence), so a window is as long as the wall clock says that night. A window
///   whose resolved end is not after its start (both ends inside one DST gap) is empty and
///   skipped.
extension Schedule {
    /// The window that starts on the civil day `date`, if the schedule has one that day.
    public func window(startingOn date: CivilDate, clock: LocalClock) -> Window? {
        guard days.contains(date.weekday) else { return nil }
        let startInstant = clock.instant(date, start)
        let endDate = end > start ? date : date.adding(days: 1)
        let endInstant = clock.instant(endDate, end)
        guard endInstant > startInstant else { return nil }
        return Window(start: startInstant, end: endInstant)
    }

    /// Windows are at most a little over a day long, so the one containing `t` starts on
    /// t's local day or the day before; two days back covers zones that skip a whole day.
    public func activeWindow(at t: Date, clock: LocalClock) -> Window? {
        let today = clock.civil(of: t).date
        for back in 0...2 {
            if let w = window(startingOn: today.adding(days: -back), clock: clock), w.contains(t) { return w }
        }
        return nil
    }

    /// The first window that starts strictly after `t`.
    public func nextWindow(after t: Date, clock: LocalClock) -> Window? {
        guard !days.isEmpty else { return nil }
        let today = clock.civil(of: t).date
        for ahead in -1...9 {
            if let w = window(startingOn: today.adding(days: ahead), clock: clock), w.start > t { return w }
        }
        return nil
    }

    /// The first start or end of a window strictly after `t`.
    public func nextBoundary(after t: Date, clock: LocalClock) -> Date? {
        guard !days.isEmpty else { return nil }
        let today = clock.civil(of: t).date
        for ahead in -2...9 {
            guard let w = window(startingOn: today.adding(days: ahead), clock: clock) else { continue }
            if w.start > t { return w.start }
            if w.end > t { return w.end }
        }
        return nil
    }
}
