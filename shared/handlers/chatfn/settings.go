package chatfn

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/chat"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/settings"
)

// threadSettings gives the chat a thread's settings from package settings.
type threadSettings struct{ store *settings.Store }

// Get implements [chat.SettingsSource].
func (s threadSettings) Get(ctx context.Context, t, threadID string) (chat.Settings, error) {
	if threadID == "" {
		// A turn on a caller-held history has no thread to read.
		return chat.Settings{}, nil
	}
	st, err := s.store.Get(ctx, t, threadID)
	if err != nil {
		return chat.Settings{}, err
	}
	return chatSettings(st), nil
}

// chatSettings maps a thread's settings onto what a turn reads. The tool
// groups share their names (seed 000's tools_enabled). The default system
// prompt (optimizer_basic-default, what a thread never configured holds)
// leaves the choice to the turn, which takes optimizer_tools-default when
// tools are on, as seed 000 does; the rephrase switch is read by the
// pipeline's rephrase step itself, from the thread.
func chatSettings(st settings.Settings) chat.Settings {
	temperature := st.Model.Temperature
	out := chat.Settings{
		ToolsEnabled: append([]string{}, st.ToolsEnabled...),
		Stores:       st.VectorSearch.Stores,
		Mode:         st.VectorSearch.Mode,
		TopK:         st.VectorSearch.TopK,
		Ungraded:     !st.VectorSearch.Grade,
		Model:        st.Model.Generator,
		Temperature:  &temperature,
		MaxTokens:    st.Model.MaxTokens,
	}
	if st.Prompts.System != prompt.Basic {
		out.System = st.Prompts.System
	}
	return out
}
