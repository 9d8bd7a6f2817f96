import Foundation

extension SeededGenerator {
    /// 1970-01-01 to 2100-01-01, the span the date specs draw from.
    public static let dateSpan = Date(timeIntervalSince1970: 0)..<Date(timeIntervalSince1970: 4_102_444_800)

    /// A date in `span` whose every bit is random, the last ones of its sub-second part too:
    /// `Double.random(in:)` alone draws from a grid coarser than a `Date`'s, whose dates survive
    /// roundings that a `Date()` does not.
    public mutating func date(in span: Range<Date> = SeededGenerator.dateSpan) -> Date {
        let low = span.lowerBound.timeIntervalSinceReferenceDate, high = span.upperBound.timeIntervalSinceReferenceDate
        let coarse = Double.random(in: low..<high, using: &self)
        let fine = Double(bitPattern: coarse.bitPattern ^ UInt64.random(in: 0..<(1 << 24), using: &self))
        return Date(timeIntervalSinceReferenceDate: min(max(fine, low), high.nextDown))
    }
}
