/* analysis placeholder */ typedef int tt_analysis_placeholder;
