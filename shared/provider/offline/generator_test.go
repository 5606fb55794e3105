package offline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
)

var docs = []string{
	"Oracle Database supports vector indexes. The accuracy of a vector index is the share of true nearest neighbours it returns. You can request a target accuracy when you create the index.",
	"Patching Oracle Database uses OPatch. Apply the latest release update before upgrading. Downtime depends on the patch.",
	"The PGA_AGGREGATE_TARGET parameter sets the target memory for all server processes. Start with 20 percent of physical memory for OLTP systems.",
}

func generate(t *testing.T, req provider.GenerateRequest) provider.Generation {
	t.Helper()
	g, err := offline.NewGenerator().Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", req, err)
	}
	if g.Provider != "offline" || g.Model != "extractive-v1" {
		t.Errorf("Generate named provider %q model %q, want offline extractive-v1", g.Provider, g.Model)
	}
	return g
}

func TestAnswerIsTheBestMatchingSentencesInDocumentOrderWithTheirSource(t *testing.T) {
	for _, tc := range []struct {
		name     string
		question string
		max      int
		want     string
	}{
		{"OneSentenceAnswersTheQuestion", "What sets the target memory of server processes?", 0,
			"The PGA_AGGREGATE_TARGET parameter sets the target memory for all server processes. [3]"},
		{"SeveralSentencesKeepTheirOrder", "What is vector index accuracy and how do I request it?", 0,
			"The accuracy of a vector index is the share of true nearest neighbours it returns. You can request a target accuracy when you create the index. [1]"},
		{"InflectedWordsMatch", "How are databases patched?", 0,
			"Patching Oracle Database uses OPatch. Downtime depends on the patch. [2]"},
		{"MaxTokensCutsTheBestSentenceWhenNoneFits", "What sets the target memory of server processes?", 4,
			"The PGA_AGGREGATE_TARGET parameter sets… [3]"},
		{"NothingMatchesGivesAnEmptyAnswer", "Who won the football match yesterday?", 0, ""},
		{"AQuestionOfStopWordsGivesAnEmptyAnswer", "What is it?", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := generate(t, provider.GenerateRequest{Task: provider.TaskAnswer, Question: tc.question, Documents: docs, MaxTokens: tc.max})
			if diff := cmp.Diff(tc.want, g.Text); diff != "" {
				t.Errorf("answer mismatch (-want +got):\n%s", diff)
			}
			if g.OutputTokens != len(strings.Fields(g.Text)) {
				t.Errorf("OutputTokens = %d, want the %d words of the answer", g.OutputTokens, len(strings.Fields(g.Text)))
			}
			if g.InputTokens == 0 {
				t.Error("InputTokens = 0, want the words read")
			}
		})
	}
}

func TestAnswerSkipsMarkdownHeadingsAndListMarkers(t *testing.T) {
	g := generate(t, provider.GenerateRequest{Task: provider.TaskAnswer, Question: "How do I patch Oracle Database?",
		Documents: []string{"## Patching Oracle Database\n\n- Download the patch with OPatch and apply it while the database is down."}})
	if want := "Download the patch with OPatch and apply it while the database is down. [1]"; g.Text != want {
		t.Errorf("answer = %q, want %q", g.Text, want)
	}
}

func TestAnswerRepeatsNoSentenceOfOverlappingChunks(t *testing.T) {
	g := generate(t, provider.GenerateRequest{Task: provider.TaskAnswer, Question: "How is Oracle Database patched?",
		Documents: []string{"Patching Oracle Database uses OPatch. Apply it.", "Patching Oracle Database uses OPatch. Then restart."}})
	if want := "Patching Oracle Database uses OPatch. [1]"; g.Text != want {
		t.Errorf("answer = %q, want %q once", g.Text, want)
	}
}

func TestRephraseAddsTheEarlierTopicOnlyToQuestionsThatReferBack(t *testing.T) {
	history := []provider.Turn{
		{Role: "user", Content: "Hello, my name is Mike."},
		{Role: "assistant", Content: "Hello Mike, how can I help?"},
		{Role: "user", Content: "How do I determine vector index accuracy?"},
		{Role: "assistant", Content: "Oracle reports the accuracy of each vector index."},
	}
	for _, tc := range []struct {
		name     string
		question string
		history  []provider.Turn
		want     string
	}{
		{"APronounGainsTheLastUserTopic", "Can I raise it?", history, "Can I raise it? determine vector index accuracy"},
		{"AShortFollowUpGainsTheTopic", "And for partitions?", history, "And for partitions? determine vector index accuracy"},
		{"AStandaloneQuestionIsUnchanged", "How do I patch Oracle Database on Linux?", history, "How do I patch Oracle Database on Linux?"},
		{"TermsTheQuestionHasAreNotRepeated", "Is that accuracy exact?", history, "Is that accuracy exact? determine vector index"},
		{"TheQuestionAsTheLastTurnIsSkipped", "Can I raise it?", append(append([]provider.Turn(nil), history...), provider.Turn{Role: "user", Content: "Can I raise it?"}),
			"Can I raise it? determine vector index accuracy"},
		{"AChainOfFollowUpsKeepsTheTopicThatStartedIt", "What about partitions?", append(append([]provider.Turn(nil), history...),
			provider.Turn{Role: "user", Content: "Can I raise it?"}), "What about partitions? raise determine vector index accuracy"},
		{"NoHistoryLeavesTheQuestion", "Can I raise it?", nil, "Can I raise it?"},
		{"AssistantTurnsAreIgnored", "Why that?", []provider.Turn{{Role: "assistant", Content: "Restart the listener."}}, "Why that?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := generate(t, provider.GenerateRequest{Task: provider.TaskRephrase, Question: tc.question, History: tc.history})
			if diff := cmp.Diff(tc.want, g.Text); diff != "" {
				t.Errorf("rephrase mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnswerCitesEachSourceOnceAfterItsSentences(t *testing.T) {
	g := generate(t, provider.GenerateRequest{Task: provider.TaskAnswer, Question: "How are vector index accuracy and database patches handled?",
		Documents: docs, Sources: []string{"vector.md", "patching.md", "memory.md"}})
	want := "Oracle Database supports vector indexes. The accuracy of a vector index is the share of true nearest neighbours it returns. You can request a target accuracy when you create the index. [vector.md] " +
		"Patching Oracle Database uses OPatch. [patching.md]"
	if diff := cmp.Diff(want, g.Text); diff != "" {
		t.Errorf("answer mismatch (-want +got):\n%s", diff)
	}
}

func TestGradeJudgesHowMuchOfTheQuestionOneDocumentCovers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		question string
		docs     []string
		want     string
	}{
		{"ADocumentSharingTheSubjectAndAspectIsRelevant", "How accurate are vector indexes?", docs, "yes"},
		{"OneCommonWordIsNotEnough", "How much memory does my phone have?", docs, "no"},
		{"AnOffTopicQuestionSharingAWordIsNotRelevant", "How long should I boil an egg for breakfast?", []string{"A long index scan reads every entry."}, "no"},
		{"TermsSpreadOverDocumentsDoNotAdd", "accuracy patches downtime memory", []string{"accuracy matters", "patches matter", "downtime matters", "memory matters"}, "no"},
		{"AOneTermQuestionNeedsThatTerm", "OPatch?", docs, "yes"},
		{"NoDocumentsAreNotRelevant", "How accurate are vector indexes?", nil, "no"},
		{"AQuestionOfStopWordsPassesAnyDocument", "What is it?", docs, "yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := generate(t, provider.GenerateRequest{Task: provider.TaskGrade, Question: tc.question, Documents: tc.docs})
			if g.Text != tc.want {
				t.Errorf("grade = %q (relevance %.2f), want %q", g.Text, offline.Relevance(tc.question, tc.docs), tc.want)
			}
		})
	}
}

func TestRewriteAddsTheInformativeWordsOfTheBestPassagesAndTheConversation(t *testing.T) {
	history := []provider.Turn{
		{Role: "user", Content: "We run Oracle Database on Linux."},
		{Role: "assistant", Content: "Noted."},
	}
	for _, tc := range []struct {
		name    string
		history []provider.Turn
		docs    []string
		want    string
	}{
		{"WordsOfThePassagesThatCoverTheQuestion", nil, docs, "How is patching done? opatch downtime upgrading oracle update"},
		{"AndOfTheConversation", history, docs, "How is patching done? linux oracle database run opatch"},
		{"PassagesThatCoverNothingAddNothing", nil, []string{"The PGA_AGGREGATE_TARGET parameter sets the target memory."}, "How is patching done?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := generate(t, provider.GenerateRequest{Task: provider.TaskRephrase, Question: "How is patching done?", History: tc.history, Documents: tc.docs})
			if diff := cmp.Diff(tc.want, g.Text); diff != "" {
				t.Errorf("rewrite mismatch (-want +got):\n%s", diff)
			}
			for _, generic := range []string{" use", " make", " long", " apply"} {
				if strings.Contains(g.Text, generic+" ") || strings.HasSuffix(g.Text, generic) {
					t.Errorf("rewrite %q added the generic word %q", g.Text, generic)
				}
			}
		})
	}
}

func TestGenerateRefusesWhatItCannotDo(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  provider.GenerateRequest
		want string
	}{
		{"UnknownTask", provider.GenerateRequest{Task: "translate", Question: "q"}, `unknown task "translate"`},
		{"EmptyQuestion", provider.GenerateRequest{Task: provider.TaskAnswer, Question: " "}, "question is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := offline.NewGenerator().Generate(context.Background(), tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Generate = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := offline.NewGenerator().Generate(ctx, provider.GenerateRequest{Task: provider.TaskAnswer, Question: "q"}); err == nil {
		t.Error("Generate with a cancelled context succeeded")
	}
}
