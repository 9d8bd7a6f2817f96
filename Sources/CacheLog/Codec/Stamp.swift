#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Date {
    /// The stored form of a date: the seconds since 2001-01-01 that a `Date` holds, bit for bit,
    /// so that a date read back is `==` to the one saved (`Format.md`, "Dates").
    var stamp: Double { timeIntervalSinceReferenceDate }

    /// The date a stamp (``stamp``) holds.
    init(stamp: Double) { self.init(timeIntervalSinceReferenceDate: stamp) }
}

/// Stamps as databases before format 4 stored them: seconds since 1970.
enum LegacyStamp {
    /// The stamp of the date that seconds since 1970 always read as: converting rounds, which is
    /// why format 4 stores ``Foundation/Date/stamp`` instead.
    static func stamp(since1970 seconds: Double) -> Double {
        Date(timeIntervalSince1970: seconds).timeIntervalSinceReferenceDate
    }
}

/// A date alone in a `meta` value: u8 2, then the f64 stamp (9 bytes). Before format 4 it was
/// the f64 of seconds since 1970 alone (8 bytes), which reads as the date it always read as.
enum MetaStamp {
    static let version: UInt8 = 2

    static func encode(_ stamp: Double) -> [UInt8] {
        var writer = ByteWriter(capacity: 9)
        writer.u8(version)
        writer.f64(stamp)
        return writer.bytes
    }

    /// The stamp `raw` holds; nil when it is neither form.
    static func decode(_ raw: UnsafeRawBufferPointer) -> Double? {
        var reader = ByteReader(raw)
        switch raw.count {
        case 9: return reader.u8() == version ? reader.f64() : nil
        case 8: return reader.f64().map { LegacyStamp.stamp(since1970: $0) }
        default: return nil
        }
    }
}
