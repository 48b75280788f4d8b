package lm

import "fmt"

// The voice-clone prompt template of the OpenMOSS release (prompting.py).
// Each string is encoded on its own; special tokens are inserted as ids.
const (
	userRolePrefix      = "user\n"
	userReferencePrefix = "<user_inst>\n- Reference(s):\n"
	userAfterReference  = "\n- Instruction:\nNone\n- Tokens:\nNone\n- Quality:\nNone\n- Sound Event:\nNone\n- Ambient Sound:\nNone\n- Language:\nNone\n- Text:\n"
	userSuffix          = "\n</user_inst>"
	assistantTurnPrefix = "\n"
	assistantRolePrefix = "assistant\n"
)

// template holds the token ids of the fixed parts of the prompt.
type template struct {
	// head: [im_start] user\n <user_inst>\n- Reference(s):\n [audio_start]
	head []int
	// afterRef: [audio_end] \n- Instruction: ... - Text:\n
	afterRef []int
	// tail: \n</user_inst> [im_end] \n [im_start] assistant\n [audio_start]
	tail []int
}

func newTemplate(c *Config, tok interface{ Encode(string) []int }) (template, error) {
	var t template
	t.head = append(t.head, c.IMStartTokenID)
	t.head = append(t.head, tok.Encode(userRolePrefix)...)
	t.head = append(t.head, tok.Encode(userReferencePrefix)...)
	t.head = append(t.head, c.AudioStartTokenID)
	t.afterRef = append(t.afterRef, c.AudioEndTokenID)
	t.afterRef = append(t.afterRef, tok.Encode(userAfterReference)...)
	t.tail = append(t.tail, tok.Encode(userSuffix)...)
	t.tail = append(t.tail, c.IMEndTokenID)
	t.tail = append(t.tail, tok.Encode(assistantTurnPrefix)...)
	t.tail = append(t.tail, c.IMStartTokenID)
	t.tail = append(t.tail, tok.Encode(assistantRolePrefix)...)
	t.tail = append(t.tail, c.AudioStartTokenID)
	for _, ids := range [][]int{t.head, t.afterRef, t.tail} {
		for _, id := range ids {
			if id < 0 || id >= c.GPT2.VocabSize {
				return t, fmt.Errorf("prompt template token %d outside the vocabulary", id)
			}
		}
	}
	return t, nil
}

// Rows is a sequence of prompt rows, each [text_id, code_0 .. code_{n_vq-1}],
// stored flat with stride n_vq+1.
type Rows []int

// appendTextRows appends one row per text id, audio columns padded.
func (m *Model) appendTextRows(r Rows, ids []int) Rows {
	w := m.Config.NVQ + 1
	for _, id := range ids {
		r = append(r, id)
		for range w - 1 {
			r = append(r, m.Config.AudioPadTokenID)
		}
	}
	return r
}

// appendAudioRows appends one row per frame with the given slot id.
func (m *Model) appendAudioRows(r Rows, slot int, frames [][]int) Rows {
	for _, f := range frames {
		r = append(r, slot)
		r = append(r, f[:m.Config.NVQ]...)
	}
	return r
}

// PrefixRows returns the rows of the prompt that depend only on the
// reference: everything before the target text. They are the same for every
// chunk and every request with this reference, which is what makes a voice's
// prefix cacheable.
func (m *Model) PrefixRows(ref [][]int) Rows { return m.appendPrefixRows(nil, ref) }

// TextRows returns the rows after the prefix for one text chunk: the text
// tokens, the end of the user turn and the start of the assistant turn.
func (m *Model) TextRows(textIDs []int) Rows { return m.appendChunkRows(nil, textIDs) }

// PromptRows returns the whole voice-clone prompt for one text chunk.
func (m *Model) PromptRows(ref [][]int, textIDs []int) Rows {
	return m.appendChunkRows(m.appendPrefixRows(nil, ref), textIDs)
}

func (m *Model) appendPrefixRows(r Rows, ref [][]int) Rows {
	r = m.appendTextRows(r, m.template.head)
	r = m.appendAudioRows(r, m.Config.AudioUserSlotTokenID, ref)
	return m.appendTextRows(r, m.template.afterRef)
}

func (m *Model) appendChunkRows(r Rows, textIDs []int) Rows {
	r = m.appendTextRows(r, textIDs)
	return m.appendTextRows(r, m.template.tail)
}

// prefixLen is the number of rows PrefixRows(ref) has.
func (m *Model) prefixLen(ref [][]int) int {
	return len(m.template.head) + len(ref) + len(m.template.afterRef)
}

// checkRef validates reference codes against the model's codebooks; its
// errors are InputErrors.
func (m *Model) checkRef(ref [][]int) error {
	if len(ref) == 0 {
		return &InputError{Msg: "reference has no audio frames"}
	}
	for i, f := range ref {
		if len(f) < m.Config.NVQ {
			return &InputError{Msg: fmt.Sprintf("reference frame %d has %d codes, the model needs %d", i, len(f), m.Config.NVQ)}
		}
		for c := range m.Config.NVQ {
			if f[c] < 0 || f[c] >= m.Config.AudioCodebookSizes[c] {
				return &InputError{Msg: fmt.Sprintf("reference frame %d code %d = %d is outside codebook size %d", i, c, f[c], m.Config.AudioCodebookSizes[c])}
			}
		}
	}
	return nil
}
