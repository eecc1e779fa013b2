# Core data of ttrsim: the compiled board, the game state and the final score, as flat
# fixed-size C structs (copying a state is a memcpy). All compiled modules and
# user-compiled policies cimport these declarations.
from libc.stdint cimport int8_t, int16_t, int32_t, uint8_t, uint64_t


cdef enum:
    MAX_CITIES = 64        # a city set is one uint64 bitset
    MAX_ROUTES = 128       # a route set is two uint64 words
    MAX_TICKETS = 128
    MAX_COLORS = 8         # plain card colours 0..7
    GRAY_CLASS = 8         # index of the gray routes in BoardC.class_upto (after any colour)
    N_CARD_TYPES = 9       # plain colours + the wild card
    WILD = 8               # card type of the locomotive (New York: taxi)
    GRAY = -1              # route colour meaning "any one colour"
    MAX_PLAYERS = 5
    MAX_LEN = 16           # route lengths 1..15
    MAX_DECK = 255         # train cards in a board's deck
    N_FACEUP = 5
    MAX_STATIONS = 3
    MAX_PENDING = 8        # tickets offered in one choice
    MAX_ADJ = 32           # routes entering one city
    MAX_TIE_BREAKS = 4
    MAX_ACTIONS = 16384    # bound on the legal action list

# The default turn limit of every loop that plays games (a game still running after this
# many turns is stopped: scored, or truncated in the environments). Python reads it as
# ttrsim._batch.DEFAULT_MAX_TURNS.
cdef enum:
    TURN_LIMIT = 10000

# Tie-breaks after total points, in board order (see docs/maps.md).
cdef enum:
    TB_TICKETS = 1         # most completed tickets
    TB_FEWEST_STATIONS = 2 # fewest stations built
    TB_LONGEST = 3         # holder of the longest trail bonus

# Game phases: who must act and what kind of decision it is.
cdef enum:
    PH_SETUP_TICKETS = 0   # s.current chooses which initial tickets to keep
    PH_TURN = 1            # s.current starts a turn
    PH_SECOND_DRAW = 2     # s.current draws the second train card
    PH_KEEP_TICKETS = 3    # s.current keeps some of the tickets just drawn
    PH_TUNNEL = 4          # s.current pays the extra tunnel cards or declines
    PH_OVER = 5

# Action kinds. An action is one int32: kind << 24 | a << 16 | b << 8 | c.
cdef enum:
    ACT_PASS = 0
    ACT_DRAW_FACEUP = 1    # a = face-up slot
    ACT_DRAW_BLIND = 2
    ACT_CLAIM = 3          # a = route, b = colour of the non-wild cards (WILD: all wild), c = wild cards
    ACT_DRAW_TICKETS = 4
    ACT_KEEP = 5           # a = bit mask over the pending tickets
    ACT_STATION = 6        # a = city, b = colour (WILD: all wild), c = wild cards
    ACT_TUNNEL_PAY = 7     # c = wild cards among the extra cards
    ACT_TUNNEL_DECLINE = 8


ctypedef struct Rng:
    uint64_t s[4]          # xoshiro256** state


ctypedef struct BoardC:
    uint64_t uid                        # unique per compiled board in a process (policies key
                                        # their per-board data on it)
    int n_cities
    int n_routes
    int n_tickets
    int n_colors
    # routes
    int16_t route_a[MAX_ROUTES]
    int16_t route_b[MAX_ROUTES]
    int8_t route_len[MAX_ROUTES]
    int8_t route_color[MAX_ROUTES]      # 0..n_colors-1 or GRAY
    uint8_t route_tunnel[MAX_ROUTES]
    int8_t route_ferry[MAX_ROUTES]      # wild cards the route requires
    int16_t route_partner[MAX_ROUTES]   # other half of a double route, or -1
    int route_points[MAX_LEN]           # points by length; 0 where no route has that length
    uint64_t all_routes[2]              # bitset of every route of the board
    uint64_t double_routes[2]           # routes that have a partner
    # Routes by colour class (c < n_colors: that colour; GRAY_CLASS: gray) and length:
    # class_upto[c][n] = routes of class c no longer than n; ferry_over[w] = routes that
    # need more than w wild cards. The random policy draws its claims from them.
    uint64_t class_upto[MAX_COLORS + 1][MAX_LEN][2]
    uint64_t ferry_over[MAX_LEN][2]
    # routes entering each city
    int16_t adj[MAX_CITIES][MAX_ADJ]
    int n_adj[MAX_CITIES]
    # tickets
    int16_t ticket_a[MAX_TICKETS]
    int16_t ticket_b[MAX_TICKETS]
    int16_t ticket_points[MAX_TICKETS]
    uint8_t ticket_long[MAX_TICKETS]
    # rules
    int min_players
    int max_players
    int trains
    int stations
    int station_points                  # per station never built
    int initial_hand
    int deal_regular                    # initial tickets per player from the regular deck
    int deal_long                       # initial tickets per player from the long deck
    int initial_keep                    # initial tickets to keep at least
    int initial_discards_removed        # 1: discarded initial tickets leave the game
    int draw_tickets
    int draw_keep
    int longest_bonus                   # 0: no longest trail bonus
    int globetrotter_bonus              # to each seat tied for the most completed tickets (0: none)
    int double_min_players              # both halves of a double usable from this count
    int end_trigger                     # final round when trains left <= this
    int wild_faceup_limit               # re-deal when this many wilds are face up
    int max_redeals                     # re-deals in a row at most
    int deck_count[N_CARD_TYPES]
    int deck_total
    uint64_t attractions                # city bitset of tourist attractions
    int attraction_points
    int n_tie_breaks
    int tie_breaks[MAX_TIE_BREAKS]


ctypedef struct PlayerC:
    int16_t hand[N_CARD_TYPES]
    int trains
    int stations_left
    int route_points                    # points scored by claims so far
    int8_t station_city[MAX_STATIONS]   # cities of stations built, in order (-1: none)
    uint64_t routes[2]                  # route bitset
    uint64_t cities                     # cities touched by own routes
    uint64_t tickets[2]                 # ticket bitset of tickets held
    uint64_t discarded[2]               # own initial tickets discarded out of the game
    int n_tickets
    int n_routes


ctypedef struct GameState:
    Rng rng
    int n_players
    int phase
    int current
    int turn                            # completed turns, all players together
    PlayerC p[MAX_PLAYERS]
    # train cards: every card is in the deck, the discards, the face-up row, a hand,
    # or being played (tunnel: played and revealed cards)
    uint8_t deck[MAX_DECK]              # top of the deck is deck[deck_n - 1]
    int deck_n
    int16_t discard[N_CARD_TYPES]
    int8_t faceup[N_FACEUP]             # card type, or -1 for an empty slot
    # board
    int8_t route_owner[MAX_ROUTES]      # seat, or -1
    int8_t city_station[MAX_CITIES]     # seat, or -1
    # the routes a seat may not claim are closed | closed_to[seat]
    uint64_t closed[2]                  # claimed routes and, below the double-route
                                        # threshold, the other half of each claimed double
    uint64_t closed_to[MAX_PLAYERS][2]  # from the threshold on, the other half of each
                                        # double the seat owns (closed to it alone)
    # tickets: deck as a ring buffer (returned tickets go to the bottom)
    uint8_t tdeck[MAX_TICKETS]
    int tdeck_head
    int tdeck_n
    uint64_t removed[2]                 # tickets out of the game
    uint8_t pending[MAX_PLAYERS][MAX_PENDING]   # tickets offered, per seat
    int n_pending[MAX_PLAYERS]
    # turn in progress
    int first_card                      # card type of the first draw (PH_SECOND_DRAW)
    int t_route                         # tunnel being claimed
    int t_color                         # colour of the non-wild cards played (WILD: all wild)
    int t_wild                          # wild cards among the cards played
    int t_extra                         # extra cards asked
    int8_t revealed[3]
    int n_revealed
    # end of game
    int last_round                      # 1 once the final round started
    int turns_left                      # turns left in the final round
    int passes                          # consecutive passes
    int ended_by_passes
    int redeals                         # face-up re-deals so far (statistics)
    # public knowledge of hands: cards each seat took from the face-up row and has not
    # spent since (payments seen by all count against them first); determinize keeps
    # them in their holder's hand
    int16_t known[MAX_PLAYERS][N_CARD_TYPES]


ctypedef struct ScoreC:
    int route_points
    int ticket_points                   # completed minus failed
    int tickets_completed
    int tickets_failed
    int tickets_by_station              # completed only thanks to a station
    int longest
    int longest_bonus
    int globetrotter                    # Globetrotter bonus scored (0 or the board's bonus)
    int station_points
    int attraction_points
    int total
    int rank                            # 1 = winner (shared on a full tie)
    int stations_built
    int16_t borrowed[MAX_STATIONS]      # route borrowed by each station built, or -1
    uint64_t completed[2]               # ticket bitset of completed tickets
    uint64_t by_station[2]
