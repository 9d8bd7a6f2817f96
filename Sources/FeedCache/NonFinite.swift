/// How text output shows a number that is not finite (JSON output shows `null` instead: JSON has
/// no such numbers).
package enum NonFinite {
    package static func text(_ value: Double) -> String {
        value.isNaN ? "nan" : value < 0 ? "-inf" : "inf"
    }
}
