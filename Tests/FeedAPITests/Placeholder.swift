import Testing
@Test func placeholder_FeedAPITests() { #expect(Bool(true)) }
