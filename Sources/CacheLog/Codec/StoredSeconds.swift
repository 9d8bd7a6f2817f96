#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Date {
    /// Dates are stored as seconds since 1970 in a double: exact round trip of any `Date`.
    var storedSeconds: Double { timeIntervalSince1970 }
    init(storedSeconds: Double) { self.init(timeIntervalSince1970: storedSeconds) }
}
