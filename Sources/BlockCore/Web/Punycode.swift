/// RFC 3492 Punycode (the Bootstring instance IDNA uses), on Unicode scalars.
///
/// E1 writes only ASCII names into /etc/hosts, so a non-ASCII label such as `bücher` has to
/// become its `xn--` form (`bcher-kva`) first. Encoding works on one label without the `xn--`
/// prefix; `Domain.normalize` adds it. Decoding exists so status output and tests can show the
/// Unicode form again.
public enum Punycode {
    // RFC 3492 §5: the parameter values for Punycode.
    private static let base: UInt32 = 36
    private static let tMin: UInt32 = 1
    private static let tMax: UInt32 = 26
    private static let skew: UInt32 = 38
    private static let damp: UInt32 = 700
    private static let initialBias: UInt32 = 72
    private static let initialN: UInt32 = 0x80
    private static let delimiter: UInt8 = 0x2D  // '-'

    /// The Punycode form of `label` (RFC 3492 §6.3), or nil if the arithmetic would overflow
    /// (§6.4: only for absurdly long input, far past the 63-octet label limit anyway).
    public static func encode(_ label: String) -> String? {
        let input = label.unicodeScalars.map(\.value)
        var output: [UInt8] = input.filter { $0 < 0x80 }.map { UInt8($0) }
        let basicCount = UInt32(output.count)
        var handled = basicCount
        if basicCount > 0 { output.append(delimiter) }

        var n = initialN
        var delta: UInt32 = 0
        var bias = initialBias
        while handled < UInt32(input.count) {
            // The smallest code point not yet handled; all below it are done (§6.3).
            guard let m = input.filter({ $0 >= n }).min() else { return nil }
            let (step, o1) = (m - n).multipliedReportingOverflow(by: handled + 1)
            guard !o1 else { return nil }
            let (d, o2) = delta.addingReportingOverflow(step)
            guard !o2 else { return nil }
            delta = d
            n = m
            for c in input {
                if c < n {
                    let (d, o) = delta.addingReportingOverflow(1)
                    guard !o else { return nil }
                    delta = d
                }
                guard c == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = threshold(k, bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, handled + 1, handled == basicCount)
                delta = 0
                handled += 1
            }
            let (next, overflow) = delta.addingReportingOverflow(1)
            guard !overflow else { return nil }
            delta = next
            n += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The Unicode label for a Punycode string without its `xn--` prefix (RFC 3492 §6.2), or
    /// nil if it is not valid Punycode.
    public static func decode(_ ascii: String) -> String? {
        let input = Array(ascii.utf8)
        guard input.allSatisfy({ $0 < 0x80 }) else { return nil }
        var output: [UInt32] = []
        var start = 0
        if let last = input.lastIndex(of: delimiter) {
            output = input[..<last].map { UInt32($0) }
            start = last + 1
        }

        var n = initialN
        var i: UInt32 = 0
        var bias = initialBias
        var position = start
        while position < input.count {
            let oldI = i
            var w: UInt32 = 1
            var k = base
            while true {
                guard position < input.count, let d = digitValue(input[position]) else { return nil }
                position += 1
                let (dw, o1) = d.multipliedReportingOverflow(by: w)
                guard !o1 else { return nil }
                let (sum, o2) = i.addingReportingOverflow(dw)
                guard !o2 else { return nil }
                i = sum
                let t = threshold(k, bias)
                if d < t { break }
                let (nw, o3) = w.multipliedReportingOverflow(by: base - t)
                guard !o3 else { return nil }
                w = nw
                k += base
            }
            let count = UInt32(output.count + 1)
            bias = adapt(i - oldI, count, oldI == 0)
            let (nn, o4) = n.addingReportingOverflow(i / count)
            guard !o4 else { return nil }
            n = nn
            i %= count
            // §6.2: basic code points must be encoded literally, never as deltas.
            guard n >= initialN, Unicode.Scalar(n) != nil else { return nil }
            output.insert(n, at: Int(i))
            i += 1
        }
        var result = String.UnicodeScalarView()
        for value in output {
            guard let scalar = Unicode.Scalar(value) else { return nil }
            result.append(scalar)
        }
        return String(result)
    }

    private static func threshold(_ k: UInt32, _ bias: UInt32) -> UInt32 {
        k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
    }

    /// RFC 3492 §6.1.
    private static func adapt(_ delta: UInt32, _ numPoints: UInt32, _ firstTime: Bool) -> UInt32 {
        var delta = firstTime ? delta / damp : delta / 2
        delta += delta / numPoints
        var k: UInt32 = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }

    /// 0–25 → a–z, 26–35 → 0–9; lowercase because hosts-file names are written lowercase (E1).
    private static func digit(_ d: UInt32) -> UInt8 {
        d < 26 ? UInt8(d) + 0x61 : UInt8(d - 26) + 0x30
    }

    private static func digitValue(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x30...0x39: UInt32(c - 0x30) + 26
        case 0x41...0x5A: UInt32(c - 0x41)
        case 0x61...0x7A: UInt32(c - 0x61)
        default: nil
        }
    }
}
