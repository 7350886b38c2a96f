/// Punycode (RFC 3492), used to measure the A-label length of internationalised
/// domain labels (RFC 5890 §2.3.2.1).
enum Punycode {
    /// Encodes a label with Punycode (without the `xn--` prefix); nil on overflow.
    static func encode(_ input: [Unicode.Scalar]) -> String? {
        let base = 36, tMin = 1, tMax = 26
        var n = 128, delta = 0, bias = 72
        var output = String.UnicodeScalarView()
        for scalar in input where scalar.isASCII {
            output.append(scalar)
        }
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append("-") }

        let codePoints = input.map { Int($0.value) }
        while handled < codePoints.count {
            guard let next = codePoints.filter({ $0 >= n }).min() else { return nil }
            let (product, overflow1) = (next - n).multipliedReportingOverflow(by: handled + 1)
            let (sum, overflow2) = delta.addingReportingOverflow(product)
            if overflow1 || overflow2 { return nil }
            delta = sum
            n = next
            for codePoint in codePoints {
                if codePoint < n {
                    let (incremented, overflow) = delta.addingReportingOverflow(1)
                    if overflow { return nil }
                    delta = incremented
                }
                if codePoint == n {
                    var q = delta
                    var k = base
                    while true {
                        let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                        if q < t { break }
                        output.append(digit(t + (q - t) % (base - t)))
                        q = (q - t) / (base - t)
                        k += base
                    }
                    output.append(digit(q))
                    bias = adapt(delta: delta, points: handled + 1, first: handled == basicCount)
                    delta = 0
                    handled += 1
                }
            }
            delta += 1
            n += 1
        }
        return String(output)
    }

    private static func digit(_ value: Int) -> Unicode.Scalar {
        // 0–25 → a–z, 26–35 → 0–9.
        let code = value < 26 ? 0x61 + value : 0x30 + value - 26
        return Unicode.Scalar(UInt8(truncatingIfNeeded: code))
    }

    private static func adapt(delta: Int, points: Int, first: Bool) -> Int {
        let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}
