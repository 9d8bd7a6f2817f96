#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Renders a duration in seconds the way the options take it back: `8d`, `12h`, `15m`, `90s`,
/// or a combination such as `7d 2h`.
///
/// Durations come from stored data too (an expire's max age, the age of a cache timestamp), so
/// any `Double` is shown, never trapped on: `nan`, `inf` or `-inf` when it is not finite, whole
/// days alone when it is too large for seconds to count in an `Int`, and seconds in exponent
/// notation (`1e+300s`) when even the days are too many to write out.
package enum DurationText {
    /// `seconds` as the options write durations.
    package static func string(_ seconds: TimeInterval) -> String {
        guard seconds.isFinite else { return NonFinite.text(seconds) }
        let whole = seconds.rounded(.towardZero)
        guard abs(whole) < 1e15 else {
            let days = (whole / 86_400).rounded(.towardZero)
            return abs(days) < 1e15 ? "\(Int(days))d" : TimestampText.number(whole) + "s"
        }
        var rest = Int(whole)
        if rest == 0 { return "0s" }
        let sign = rest < 0 ? "-" : ""
        rest = abs(rest)
        var parts: [String] = []
        for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] where rest >= size {
            parts.append("\(rest / size)\(unit)")
            rest %= size
            if parts.count == 2 { break }
        }
        return sign + parts.joined(separator: " ")
    }
}
