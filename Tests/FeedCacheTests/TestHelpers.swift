import FeedCache
import Foundation
import Seeding

/// An item as an app would cache it.
struct TestItem: Codable, Sendable, Equatable {
    let id: UUID
    let title: String
}

struct AnyError: Error, Equatable {
    let label: String
    init(_ label: String = "any error") { self.label = label }
}

func anyError(_ label: String = "any error") -> AnyError { AnyError(label) }
func anyData(_ text: String = "any data") -> Data { Data(text.utf8) }
func anyURL(_ path: String = "any") -> URL {
    var components = URLComponents()
    components.scheme = "https"
    components.host = "a-url.example"
    components.path = "/" + path
    return components.url ?? URL(fileURLWithPath: "/" + path)
}

func uniqueItems(count: Int = 2) -> [TestItem] {
    (0..<count).map { TestItem(id: UUID(), title: "item \($0)") }
}

func encoded(_ items: [TestItem]) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return try encoder.encode(items)
}

/// A fixed "now", so that tests never depend on the real clock.
let fixedCurrentDate = Date(timeIntervalSince1970: 1_700_000_000)

/// The "now"s the boundary specs run at: the fixed one, and random instants from 1970 to 2100
/// with every bit of their sub-second part random (seeded, so a failure replays).
let currentDates: [Date] = {
    var generator = SeededGenerator(seed: 37)
    return [fixedCurrentDate] + (0..<12).map { _ in generator.date() }
}()

private let utcCalendar: Calendar = {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
    return calendar
}()

extension Date {
    /// This date moved back by `maxAge`, counted on the UTC Gregorian calendar.
    func minus(_ maxAge: MaxAge) -> Date {
        let components: DateComponents = switch maxAge {
        case .seconds(let value): DateComponents(second: -value)
        case .minutes(let value): DateComponents(minute: -value)
        case .hours(let value): DateComponents(hour: -value)
        case .days(let value): DateComponents(day: -value)
        }
        return utcCalendar.date(byAdding: components, to: self) ?? self
    }

    func adding(seconds: TimeInterval) -> Date { self + seconds }
    func adding(days: Int) -> Date { utcCalendar.date(byAdding: .day, value: days, to: self) ?? self }
}
