/// What a vCard request (XEP-0054 §3.1, §3.2) brought.
public enum VCardAnswer: Sendable {
    /// The vCard (possibly empty).
    case card(XMLElement)
    /// The server says there is none (a stanza error such as item-not-found).
    case none
    /// No answer (a timeout, a lost connection): nothing can be concluded.
    case failed(String)
}

extension XMPPSession {
    /// `contact`'s vCard, or the account's own for nil (XEP-0054 §3.1, §3.2).
    @_specialize(exported: true, where C == EventLoopClock)
    public func vCard(of contact: JID?, timeout: Duration) async -> VCardAnswer {
        let request = IQ(type: .get, id: self.nextID(), to: contact?.bare, payload: XMLElement(name: "vCard", namespace: OwnProfile.vCardNamespace))
        do {
            let answer = try await self.request(request, timeout: timeout)
            guard let card = answer.payload, card.name == "vCard" else { return .none }
            return .card(card)
        } catch XMPPSessionError.stanzaError {
            return .none
        } catch {
            return .failed("\(error)")
        }
    }
}
