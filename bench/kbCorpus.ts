/**
 * A small labelled retrieval set for the knowledge base benchmark: short documents of a fictional
 * company (product docs, policies, how-tos, FAQs) and questions, each labelled with the documents
 * that answer it. Written by hand before anything was measured; not tuned to any search method.
 *
 * Question kinds: `exact` shares a rare keyword with its document (an error code, a header, a
 * product name); `paraphrase` says it in other words or other forms (plural/singular, -ing forms,
 * synonyms); `common` is made of words many documents use (days, account, plan, data, change).
 */
export type KbDoc = { id: string; topic: string; content: string };
export type KbQuestionKind = 'exact' | 'paraphrase' | 'common';
export type KbQuestion = { question: string; relevant: string[]; kind: KbQuestionKind };

const docs = (topic: string, entries: [string, string][]): KbDoc[] =>
  entries.map(([id, content]) => ({ id, topic, content }));

export const KB_DOCS: KbDoc[] = [
  ...docs('billing', [
    [
      'b01',
      'Invoices are generated on the first day of each billing cycle and emailed to the billing contact on the account. You can download past invoices as PDF files from Settings > Billing > Invoice history.',
    ],
    [
      'b02',
      'We accept Visa, Mastercard and American Express. Annual plans can also be paid by bank transfer (ACH or SEPA); the transfer must arrive within 15 days of the invoice date.',
    ],
    [
      'b03',
      'Upgrading your plan takes effect immediately and you are charged a prorated amount for the rest of the current cycle. Downgrades take effect at the start of the next cycle, and no credit is issued for unused seats.',
    ],
    [
      'b04',
      'If a card payment fails, we retry it three times over seven days. After the final attempt the workspace enters a read-only grace period of 14 days before it is suspended.',
    ],
    [
      'b05',
      'Tax: VAT is added to invoices for customers in the EU unless a valid VAT ID is entered in the billing profile. US sales tax is calculated from the billing address.',
    ],
    [
      'b06',
      'Refunds for annual subscriptions are available within 30 days of the purchase date. Monthly subscriptions are not refundable, but you can cancel at any time to stop the next renewal.',
    ],
    [
      'b07',
      'To change the billing contact, an owner opens Settings > Billing and edits the Billing email field. Invoices and payment receipts go to that address; other admins can be added in CC.',
    ],
    [
      'b08',
      'Purchase orders: enterprise customers can ask us to reference a PO number on every invoice. Send the PO number to billing@example.com before the renewal date.',
    ],
    [
      'b09',
      'Seats are counted as the number of active members on the last day of the cycle. Deactivated members do not count, and guests with view-only access are free.',
    ],
    [
      'b10',
      'Coupon codes are applied at checkout and cannot be combined. A code that reads EXPIRED or INVALID_PROMO has either passed its end date or belongs to another plan tier.',
    ],
  ]),
  ...docs('account', [
    [
      'a01',
      'Two-factor authentication (2FA) can be enabled in Profile > Security using an authenticator app such as Google Authenticator or 1Password. Save the ten recovery codes somewhere safe; each one works once.',
    ],
    [
      'a02',
      'If you lost your phone and cannot pass 2FA, use one of your recovery codes. Without a recovery code, a workspace owner must reset your second factor from the Members page.',
    ],
    [
      'a03',
      'Single sign-on with SAML 2.0 is available on the Enterprise plan. Supported identity providers include Okta, Azure AD (Entra ID) and OneLogin; upload the IdP metadata XML under Settings > Authentication.',
    ],
    [
      'a04',
      'SCIM provisioning keeps members in sync with your identity provider: users created in Okta appear in the workspace automatically and are deactivated when they are removed there.',
    ],
    [
      'a05',
      'Passwords must be at least 12 characters long. We check new passwords against known breach lists and reject ones that have appeared in public leaks.',
    ],
    [
      'a06',
      "To reset a forgotten password, click 'Forgot password' on the sign-in page. The reset link expires after 60 minutes; request a new one if it has expired.",
    ],
    [
      'a07',
      'Sessions expire after 30 days of inactivity. Owners can shorten the session lifetime for everyone in Settings > Security > Session policy, down to one hour.',
    ],
    [
      'a08',
      'Audit logs record sign-ins, permission changes, exports and deletions for 365 days. Enterprise admins can stream them to a SIEM such as Splunk or Datadog.',
    ],
    [
      'a09',
      'Roles: owners manage billing and security, admins manage members and projects, members create and edit content, and guests can only view the projects shared with them.',
    ],
    [
      'a10',
      "To transfer ownership of a workspace, the current owner opens Settings > Members, picks another admin and chooses 'Make owner'. There must always be at least one owner.",
    ],
    [
      'a11',
      'You can change the email address of your account in Profile > Account. We send a confirmation link to the new address, and the change only takes effect once it is clicked.',
    ],
  ]),
  ...docs('api', [
    [
      'p01',
      'All API requests are authenticated with a bearer token in the Authorization header. Create personal API tokens in Profile > API tokens; a token inherits the permissions of the user who created it.',
    ],
    [
      'p02',
      'Rate limits: each token may send 100 requests per minute, with bursts of up to 20 requests per second. Responses that exceed the limit return HTTP 429 with a Retry-After header in seconds.',
    ],
    [
      'p03',
      'Webhooks deliver events such as record.created and record.deleted as JSON POST requests. Each delivery is signed with HMAC-SHA256 in the X-Signature header; verify it with your webhook secret.',
    ],
    [
      'p04',
      'Failed webhook deliveries are retried with exponential backoff for up to 24 hours. After that the endpoint is disabled and the owner receives an email.',
    ],
    [
      'p05',
      'Pagination: list endpoints return at most 100 items and a next_cursor field. Pass it as the cursor query parameter to fetch the following page; an empty cursor means the end of the list.',
    ],
    [
      'p06',
      'Error E4012 means the request body failed schema validation; the response lists each invalid field. Error E5003 is a temporary upstream timeout and can be retried safely.',
    ],
    [
      'p07',
      'The official SDKs are available for Python (pip install northwind) and JavaScript (npm install @northwind/sdk). Both read the token from the NORTHWIND_TOKEN environment variable.',
    ],
    [
      'p08',
      'API versions are selected with the Api-Version header, for example 2024-06-01. A version is supported for at least 18 months after its successor is released.',
    ],
    [
      'p09',
      'Idempotency: send an Idempotency-Key header on POST requests so that a retried request does not create a duplicate record. Keys are remembered for 24 hours.',
    ],
    [
      'p10',
      'The sandbox environment at sandbox.api.example.com has its own tokens and data, is reset every Sunday, and never sends real emails or charges cards.',
    ],
  ]),
  ...docs('store', [
    [
      's01',
      'Standard shipping takes three to five business days within the continental US. Orders placed before 2 pm Eastern ship the same day.',
    ],
    [
      's02',
      'Express shipping delivers the next business day for orders placed before noon. It is not available for PO boxes or for addresses in Alaska and Hawaii.',
    ],
    [
      's03',
      'We ship internationally to 40 countries. Import duties and taxes are collected at checkout, so there is nothing more to pay when the parcel arrives.',
    ],
    [
      's04',
      'You can return unworn items within 30 days of delivery. Print a prepaid return label from the Orders page, pack the items in the original box and drop it off at any carrier location.',
    ],
    [
      's05',
      'Refunds are issued to the original payment method within five business days after the returned items arrive at our warehouse. Shipping costs are not refunded.',
    ],
    [
      's06',
      'Exchanges for a different size or color are free. Start an exchange from the Orders page; we ship the replacement as soon as the carrier scans your return.',
    ],
    [
      's07',
      'To track a parcel, open the shipping confirmation email and follow the tracking link, or enter the order number on the Track order page.',
    ],
    [
      's08',
      'If your package arrives damaged, take photos of the box and the product and contact support within 7 days. We send a replacement at no cost.',
    ],
    [
      's09',
      'Gift cards are delivered by email, never expire, and can be used for any purchase in the online store. They cannot be exchanged for cash.',
    ],
    [
      's10',
      'Final sale items, personalised engravings and opened cosmetics cannot be returned or exchanged.',
    ],
  ]),
  ...docs('hr', [
    [
      'h01',
      'Full-time employees accrue 1.67 days of paid time off (PTO) per month, 20 days per year. Up to five unused days carry over into the next calendar year.',
    ],
    [
      'h02',
      'Request time off in the HR portal at least two weeks in advance for absences longer than three days. Your manager approves or declines the request in the portal.',
    ],
    [
      'h03',
      "Sick leave is separate from PTO: employees have ten paid sick days per year. A doctor's note is only required for absences longer than three consecutive days.",
    ],
    [
      'h04',
      'Parental leave: birthing parents receive 16 weeks of fully paid leave and non-birthing parents receive 10 weeks, to be taken within the first year after the birth or adoption.',
    ],
    [
      'h05',
      'Expense reports are submitted in Expensify within 30 days of the purchase. Attach an itemised receipt for any expense over 25 dollars; meals while traveling are reimbursed up to 60 dollars per day.',
    ],
    [
      'h06',
      'Business travel must be booked through the travel portal. Economy class is required for flights under six hours; for longer flights premium economy is allowed.',
    ],
    [
      'h07',
      'Employees may work remotely up to three days per week. Fully remote arrangements need approval from the department head and HR.',
    ],
    [
      'h08',
      'The home office stipend is a one-time 500 dollar allowance for a desk, chair or monitor, plus 50 dollars per month toward internet costs.',
    ],
    [
      'h09',
      'Performance reviews happen twice a year, in March and September. Employees complete a self-assessment, and managers collect peer feedback before the review meeting.',
    ],
    [
      'h10',
      'The annual learning budget of 1,000 dollars per employee covers courses, conference tickets and books. Ask your manager before booking anything over 300 dollars.',
    ],
    [
      'h11',
      'New hires complete onboarding in their first two weeks: security training, benefits enrollment, and a meeting with their onboarding buddy.',
    ],
  ]),
  ...docs('it', [
    [
      'i01',
      'To connect to the VPN, install the GlobalProtect client from the self-service portal, enter vpn.corp.example.com as the portal address and sign in with your SSO credentials.',
    ],
    [
      'i02',
      'If the VPN disconnects every few minutes, switch the protocol from IPSec to SSL in the GlobalProtect settings and make sure your laptop is not putting the network adapter to sleep.',
    ],
    [
      'i03',
      'Printers: add the office printer by opening Settings > Printers and choosing FollowMe-Queue. Print jobs are released when you tap your badge on any printer.',
    ],
    [
      'i04',
      'Laptops are replaced every three years. If your laptop is broken, open a ticket with the IT service desk; a loaner is available the same day at the IT bar.',
    ],
    [
      'i05',
      'To request software that is not in the self-service portal, file a software request ticket. Security reviews new tools within five business days.',
    ],
    [
      'i06',
      'Wi-Fi: employees use the CORP-SECURE network with their SSO credentials. Visitors connect to CORP-GUEST with the daily password shown at reception.',
    ],
    [
      'i07',
      'Phishing: report suspicious emails with the Report Phish button in Outlook. Never enter your password on a page reached from an email link.',
    ],
    [
      'i08',
      'Full-disk encryption (FileVault on macOS, BitLocker on Windows) is required on every company laptop. IT can read the recovery key if you are locked out.',
    ],
    [
      'i09',
      'Shared drives: team folders live in Google Drive shared drives. Ask a drive manager to add you; files in your personal My Drive are deleted 30 days after you leave.',
    ],
    [
      'i10',
      'Password manager: every employee gets a 1Password business account. Store work passwords only there, and share credentials through vaults rather than chat messages.',
    ],
    [
      'i11',
      'Meeting rooms have Zoom Rooms controllers. To start a meeting, tap the booking on the controller; to share your screen, enter the sharing key displayed on the TV.',
    ],
  ]),
  ...docs('product', [
    [
      'f01',
      'Dashboards combine charts from several reports on one page. Drag a chart by its title bar to rearrange the layout, and use the filter bar to filter every chart at once.',
    ],
    [
      'f02',
      'Export any report to CSV or Excel from the Export menu. Exports larger than 1 million rows are prepared in the background and emailed to you as a download link.',
    ],
    [
      'f03',
      'Scheduled reports email a PDF snapshot of a dashboard daily, weekly or monthly. Recipients outside the workspace receive the PDF but cannot open the live dashboard.',
    ],
    [
      'f04',
      'Formulas in calculated fields support IF, SUM, AVG, DATEDIFF and ROUND. Field names with spaces must be wrapped in square brackets.',
    ],
    [
      'f05',
      'Importing data: upload CSV or XLSX files up to 200 MB, or connect Postgres, MySQL, Snowflake or BigQuery. Column types are detected from the first 1,000 rows.',
    ],
    [
      'f06',
      'Data refreshes: connected databases are synced every hour by default. Enterprise workspaces can sync as often as every five minutes.',
    ],
    [
      'f07',
      'Sharing: share a dashboard with a link that requires sign-in, or publish it publicly with a read-only link. Public links can be revoked at any time.',
    ],
    [
      'f08',
      'Alerts notify you by email or Slack when a metric crosses a threshold. Each alert is checked after every data refresh.',
    ],
    [
      'f09',
      'Comments: mention a teammate with @ to notify them. Resolved comment threads are hidden but can be shown again from the comments panel.',
    ],
    [
      'f10',
      'Version history keeps every saved version of a report for 90 days. Open History in the report menu to compare versions or restore an earlier one.',
    ],
    [
      'f11',
      'Dark mode can be switched on in Profile > Appearance. Charts keep their own color palette in both themes.',
    ],
  ]),
  ...docs('privacy', [
    [
      'd01',
      'We process personal data as a processor under our Data Processing Agreement (DPA), which customers can sign electronically from Settings > Legal.',
    ],
    [
      'd02',
      'Customer data is hosted in AWS data centers in the US (us-east-1) or the EU (eu-central-1, Frankfurt). The region is chosen when the workspace is created and cannot be moved later.',
    ],
    [
      'd03',
      'Data retention: deleted records stay in the trash for 30 days, then they are purged. Backups are kept for 35 days, so purged data disappears from backups within 35 more days.',
    ],
    [
      'd04',
      'To exercise a GDPR right of access or erasure, the data subject emails privacy@example.com. We answer within 30 days.',
    ],
    [
      'd05',
      'All data is encrypted at rest with AES-256 and in transit with TLS 1.2 or higher. Enterprise customers can bring their own encryption key (BYOK) through AWS KMS.',
    ],
    [
      'd06',
      'Subprocessors we use include AWS (hosting), SendGrid (email delivery) and Stripe (payments). We announce new subprocessors 30 days before they start.',
    ],
    [
      'd07',
      'We hold SOC 2 Type II and ISO 27001 certifications. The reports are available under NDA from the Trust Center.',
    ],
    [
      'd08',
      'Cookies: the marketing site uses analytics cookies only after consent. The application itself uses only strictly necessary session cookies.',
    ],
  ]),
  ...docs('faq', [
    [
      'q01',
      'Support is available by chat and email from 8 am to 8 pm Eastern, Monday to Friday. Enterprise plans include 24/7 phone support for urgent issues.',
    ],
    [
      'q02',
      'Response times: we answer urgent tickets within one hour on Enterprise, four hours on Business, and one business day on the Starter plan.',
    ],
    [
      'q03',
      'The status page at status.example.com shows current incidents and scheduled maintenance. Subscribe to get notified by email or SMS.',
    ],
    [
      'q04',
      'Scheduled maintenance happens on the second Saturday of every month between 02:00 and 04:00 UTC. The app stays available, but imports may be delayed.',
    ],
    [
      'q05',
      'Is there a free trial? Yes: every new workspace gets a 14-day trial of the Business plan, with no credit card required.',
    ],
    [
      'q06',
      'Nonprofits and schools get a 50 percent discount on any annual plan. Apply with proof of status through the discount form.',
    ],
    [
      'q07',
      'Deleting a workspace permanently removes all of its projects, dashboards and members after a 7-day waiting period. Only an owner can delete a workspace.',
    ],
    [
      'q08',
      'The mobile app for iOS and Android shows dashboards and alerts, also offline; editing reports is only possible in the web app.',
    ],
    [
      'q09',
      'Keyboard shortcuts: press ? anywhere to see the full list. Ctrl+K (Cmd+K on macOS) opens the quick search.',
    ],
    [
      'q10',
      'Browser support: the latest two versions of Chrome, Firefox, Safari and Edge. Internet Explorer is not supported.',
    ],
  ]),
];

const q = (kind: KbQuestionKind, question: string, ...relevant: string[]): KbQuestion => ({
  question,
  relevant,
  kind,
});

export const KB_QUESTIONS: KbQuestion[] = [
  // Sharing a rare keyword with the document.
  q('exact', 'What does error E4012 mean?', 'p06'),
  q('exact', 'How do I verify the X-Signature header of a webhook?', 'p03'),
  q('exact', 'Where do I upload the SAML IdP metadata XML?', 'a03'),
  q('exact', 'My coupon code shows INVALID_PROMO, why?', 'b10'),
  q('exact', 'What is the GlobalProtect portal address?', 'i01'),
  q('exact', 'How do I add the FollowMe-Queue printer?', 'i03'),
  q('exact', 'Does the API support an Idempotency-Key header?', 'p09'),
  q('exact', 'How does the Api-Version header work?', 'p08'),
  q('exact', 'Is BYOK with AWS KMS supported?', 'd05'),
  q('exact', 'Can we stream audit logs to Splunk?', 'a08'),
  q('exact', 'What is the password for CORP-GUEST?', 'i06'),
  q('exact', 'Do you have a SOC 2 Type II report?', 'd07'),
  q('exact', 'Where do I set NORTHWIND_TOKEN?', 'p07'),
  q('exact', 'What does HTTP 429 with Retry-After mean?', 'p02'),
  q('exact', 'Is SCIM provisioning supported?', 'a04'),
  q('exact', 'Is BitLocker required on Windows laptops?', 'i08'),
  q('exact', 'What is next_cursor for?', 'p05'),
  // Other words, other forms.
  q('paraphrase', 'When do I get my invoice each month?', 'b01'),
  q('paraphrase', 'What happens when my credit card gets declined?', 'b04'),
  q('paraphrase', 'Can I get my money back for a yearly subscription?', 'b06'),
  q('paraphrase', 'How do I turn on two-factor authentication for my profile?', 'a01'),
  q('paraphrase', "I lost my phone and can't log in with 2FA", 'a02'),
  q('paraphrase', 'resetting my forgotten password', 'a06'),
  q('paraphrase', 'How long do login sessions last?', 'a07'),
  q('paraphrase', 'Who can manage billing and security settings?', 'a09'),
  q('paraphrase', 'handing over workspace ownership to another admin', 'a10'),
  q('paraphrase', 'limits on how many requests the API accepts', 'p02'),
  q('paraphrase', 'retrying failed webhook deliveries', 'p04'),
  q('paraphrase', 'How many days does standard delivery take?', 's01'),
  q('paraphrase', "returning shoes I haven't worn", 's04'),
  q('paraphrase', 'When will my refund arrive after I send the items back?', 's05'),
  q('paraphrase', 'exchanging a shirt for a bigger size', 's06'),
  q('paraphrase', 'tracking my package', 's07'),
  q('paraphrase', 'How many vacation days do employees get each year?', 'h01'),
  q('paraphrase', 'booking flights for business trips', 'h06'),
  q('paraphrase', 'working from home policy', 'h07'),
  q('paraphrase', 'reimbursement for meals when traveling', 'h05'),
  q('paraphrase', 'How much is the stipend for home office equipment?', 'h08'),
  q('paraphrase', 'What should I do if the VPN keeps disconnecting?', 'i02'),
  q('paraphrase', 'my laptop broke, how do I get a replacement?', 'i04'),
  q('paraphrase', 'reporting phishing emails', 'i07'),
  q('paraphrase', 'scheduling a dashboard to be emailed weekly', 'f03'),
  q('paraphrase', 'exporting reports to Excel', 'f02'),
  q('paraphrase', 'restoring an earlier version of a report', 'f10'),
  q('paraphrase', 'getting notified in Slack when a metric goes over a threshold', 'f08'),
  q('paraphrase', 'How often is data from connected databases synced?', 'f06'),
  q('paraphrase', 'In which regions is customer data stored?', 'd02'),
  q('paraphrase', 'How long are deleted records kept before being purged?', 'd03'),
  q('paraphrase', 'requesting deletion of my personal data under GDPR', 'd04'),
  q('paraphrase', 'What are your support hours?', 'q01'),
  q('paraphrase', 'Is there a trial period before paying?', 'q05'),
  q('paraphrase', 'discounts for nonprofit organizations', 'q06'),
  q('paraphrase', 'When does the monthly maintenance take place?', 'q04'),
  // Words many documents use.
  q('common', 'How do I change the email address on my account?', 'a11'),
  q('common', 'Can I cancel my plan at any time?', 'b06'),
  q('common', 'What happens to my data when I delete it?', 'd03', 'q07'),
  q('common', 'How many days do I have to return something?', 's04'),
  q('common', 'Who do I contact about a damaged order?', 's08'),
  q('common', 'Which plan includes single sign-on and phone support?', 'a03', 'q01'),
  q('common', 'How do I share a dashboard with people outside the workspace?', 'f07', 'f03'),
  q('common', 'How many paid days off do I get when I am sick?', 'h03'),
  q('common', 'Is my data encrypted?', 'd05'),
];
