-- rpt_marketing_performance has one row per channel and month
select marketing_channel, month_start, count(*) as row_count
from {{ ref('rpt_marketing_performance') }}
group by marketing_channel, month_start
having count(*) > 1
