import TransportCore
import XMPP

/// The account's own nick and avatar, and contacts' nicks from their vCards (issue 25;
/// XEP-0054, XEP-0084, XEP-0153, XEP-0172).
extension XMPPTransport {
    /// Publishes the account's nick and avatar when the server's vCard does not show them
    /// yet: the vCard (XEP-0054 §3.2, other fields kept), then the PEP items (XEP-0084
    /// data before metadata, XEP-0172 nick). Nothing when the vCard could not be read (a
    /// set would replace a card we did not see); a refusal is logged; the account works on.
    func publishProfile(login: Int) async {
        let card: XMLElement?
        switch await self.session.vCard(of: nil, timeout: .seconds(30)) {
        case .card(let found): card = found
        case .none: card = nil
        case .failed(let error):
            self.logger.warning("own vCard not read; nick and avatar not published until the next login", metadata: ["error": "\(error)"])
            return
        }
        guard !self.profile.isShown(in: card) else {
            self.logger.info("nick and avatar unchanged; not published again")
            return
        }
        do {
            _ = try await self.session.request(IQ(type: .set, id: await self.session.nextID(), payload: self.profile.vCard(updating: card)), timeout: .seconds(30))
            for publish in self.profile.pepPublishes {
                // A later login publishes again: this one stops.
                guard self.logins.withLockedValue({ $0 }) == login else { return }
                _ = try await self.session.request(IQ(type: .set, id: await self.session.nextID(), payload: publish), timeout: .seconds(30))
            }
            self.logger.info(
                "nick and avatar published",
                metadata: ["nick": "\(self.profile.nick ?? "-")", "avatar": "\(self.profile.avatar.map { "\($0.type) \($0.id)" } ?? "-")"]
            )
        } catch {
            self.logger.warning("nick and avatar not published", metadata: ["error": "\(error)"])
        }
    }

    /// The display name of `from`, a contact: the roster's name, else the XEP-0172 nick
    /// the message carries, else the vCard's NICKNAME (read once per contact in the roster,
    /// at its first message, within 3 s; a contact whose server did not answer is asked
    /// again at its next message), else the localpart. A stranger's vCard is never read.
    func contactNick(_ from: JID, in message: Message) async -> String {
        let item = await self.session.roster.items[from.bare]
        if let name = item?.name, !name.isEmpty { return name }
        if let nick = OwnProfile.nick(in: message.extensions) { return nick }
        let fallback = from.localpart ?? from.domainpart
        guard item != nil else { return fallback }
        if let known = self.vCardNicks.withLockedValue({ $0[from.bare] }) { return known ?? fallback }
        let nick: String?
        switch await self.session.vCard(of: from, timeout: .seconds(3)) {
        case .card(let card): nick = VCardSummary(card).nick
        case .none: nick = nil
        case .failed: return fallback
        }
        self.vCardNicks.withLockedValue { cache in
            if cache.count >= 10_000 { cache.removeAll() }
            cache[from.bare] = .some(nick)
        }
        return nick ?? fallback
    }
}
