import Testing
@Test func placeholder_AcceptanceTests() { #expect(Bool(true)) }
