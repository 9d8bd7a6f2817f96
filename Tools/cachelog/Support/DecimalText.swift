#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A number with a fixed count of decimals, as C's `printf("%.2f")` writes it (and with it
/// Foundation's `String(format:)`, which is not in `FoundationEssentials`): rounded to the
/// nearest, a tie as the exact binary value decides.
enum DecimalText {
    static func string(_ value: Double, places: Int) -> String {
        // The longest %f of a Double: 309 digits, a sign, a point and the places.
        var buffer = [CChar](repeating: 0, count: 320 + places)
        let count = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.\(places)f", $0) }
        return String(decoding: buffer.prefix(max(0, Int(count))).map(UInt8.init(bitPattern:)), as: UTF8.self)
    }
}
