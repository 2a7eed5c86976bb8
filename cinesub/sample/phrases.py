"""Parallel phrase banks for the sample world: the same sentence in the six corpus languages.

Every row is one sentence in (en, ar, id, fa, ro, vi) order, so a film's dialogue is one sequence
of row numbers rendered in each language: entry counts are identical across a film's tracks and
token counts are comparable (SPEC A5 duration-coverage audit). The rows are natural, varied
dialogue; a test checks that the language identifier (:mod:`extractors.langid`) recognises every bank.

Besides plain dialogue there are:

* ``PROFANITY_ROWS``: lines carrying the language-safety categories of SPEC A9 in English, with
  the number of lexical occurrences per Kids-in-Mind prose category (the other languages carry a
  natural, milder translation);
* ``TRAP_ROWS``: lines that look like language-safety hits but are contextual exclusions of
  SPEC A9 (food "breast", spatial "bottom of", ordinary religious dialogue, a capitalised name);
* ``STAGE_ROWS``: hearing-impaired stage directions (bracketed / all capitals);
* ``EMAIL_ROWS``: narrative lines that contain an e-mail address (kept, address redacted, SPEC A6);
* ``BOILERPLATE``: distribution artefacts per language (removed by sanitization, SPEC A6).

Romanian is written with the comma-below letters (ș ț) and Persian with the Persian yeh/kaf
(ی ک); legacy code pages that cannot hold them get the customary substitutes at encoding time
(see :mod:`cinesub.sample.encodings`). A few Romanian rows quote with „ ”, the typography that
tells a cp1250 file from an ISO-8859-16 one (otherwise the decoder flags ``encoding_ambiguous``).
"""

from __future__ import annotations

import unicodedata

LANGS: tuple[str, ...] = ("en", "ar", "id", "fa", "ro", "vi")

# fmt: off
DIALOGUE_ROWS: list[tuple[str, str, str, str, str, str]] = [
    ("Where have you been all night?", "أين كنت طوال الليل؟", "Kamu ke mana saja semalaman?", "تمام شب کجا بودی؟", "Unde ai fost toată noaptea?", "Cả đêm qua anh đã ở đâu?"),
    ("I told you not to call me here.", "قلت لك ألا تتصل بي هنا.", "Sudah kubilang jangan meneleponku di sini.", "بهت گفتم اینجا به من زنگ نزن.", "Ți-am spus să nu mă suni aici.", "Tôi đã bảo anh đừng gọi cho tôi ở đây."),
    ("We don't have much time left.", "لم يعد لدينا الكثير من الوقت.", "Waktu kita tidak banyak lagi.", "وقت زیادی برامون نمونده.", "Nu mai avem mult timp.", "Chúng ta không còn nhiều thời gian nữa."),
    ("Can you hear me? Hello?", "هل تسمعني؟ مرحبا؟", "Kamu bisa dengar aku? Halo?", "صدامو می‌شنوی؟ الو؟", "Mă auzi? Alo?", "Anh có nghe tôi nói không? Alô?"),
    ("Get in the car. Now.", "اركب السيارة. الآن.", "Masuk ke mobil. Sekarang.", "سوار ماشین شو. همین حالا.", "Urcă în mașină. Acum.", "Lên xe đi. Ngay bây giờ."),
    ("I'm not going anywhere without my sister.", "لن أذهب إلى أي مكان من دون أختي.", "Aku tidak akan pergi ke mana pun tanpa adikku.", "بدون خواهرم هیچ جا نمی‌رم.", "Nu plec nicăieri fără sora mea.", "Tôi sẽ không đi đâu nếu không có em gái tôi."),
    ("Do you remember the house by the lake?", "هل تتذكر البيت الذي بجانب البحيرة؟", "Kamu ingat rumah di tepi danau itu?", "خونه‌ی کنار دریاچه یادته؟", "Îți amintești casa de lângă lac?", "Anh còn nhớ ngôi nhà bên hồ không?"),
    ("She said she'd be back before dark.", "قالت إنها ستعود قبل حلول الظلام.", "Dia bilang akan kembali sebelum gelap.", "گفت قبل از تاریکی برمی‌گرده.", "A spus: „Mă întorc înainte să se întunece.”", "Cô ấy nói sẽ về trước khi trời tối."),
    ("That's not what I meant, and you know it.", "ليس هذا ما قصدته، وأنت تعرف ذلك.", "Bukan itu maksudku, dan kamu tahu itu.", "منظورم این نبود، خودتم می‌دونی.", "Nu asta am vrut să spun, și știi asta.", "Ý tôi không phải vậy, và anh biết mà."),
    ("Thank you for coming on such short notice.", "شكرا لأنك أتيت بهذه السرعة.", "Terima kasih sudah datang mendadak begini.", "ممنون که اینقدر زود اومدی.", "Mulțumesc că ai venit atât de repede.", "Cảm ơn anh đã đến gấp như vậy."),
    ("How long have you been working here?", "منذ متى وأنت تعمل هنا؟", "Sudah berapa lama kamu bekerja di sini?", "چند وقته اینجا کار می‌کنی؟", "De cât timp lucrezi aici?", "Anh làm việc ở đây bao lâu rồi?"),
    ("My father built this place with his own hands.", "بنى أبي هذا المكان بيديه.", "Ayahku membangun tempat ini dengan tangannya sendiri.", "پدرم اینجا رو با دست‌های خودش ساخت.", "Tata a construit locul ăsta cu mâinile lui.", "Cha tôi đã tự tay xây nơi này."),
    ("Nobody leaves this room until we find it.", "لن يغادر أحد هذه الغرفة حتى نجده.", "Tidak ada yang keluar dari ruangan ini sampai kita menemukannya.", "تا پیداش نکنیم هیچ‌کس از این اتاق بیرون نمی‌ره.", "Nimeni nu iese din cameră până nu-l găsim.", "Không ai được rời khỏi phòng này cho đến khi chúng ta tìm thấy nó."),
    ("Are you hungry? I made soup.", "هل أنت جائع؟ أعددت الحساء.", "Kamu lapar? Aku sudah masak sup.", "گرسنه‌ای؟ سوپ درست کردم.", "Ți-e foame? Am făcut supă.", "Anh đói không? Em nấu súp rồi."),
    ("It's been raining for three days.", "إنها تمطر منذ ثلاثة أيام.", "Sudah tiga hari hujan terus.", "سه روزه که داره بارون میاد.", "Plouă de trei zile.", "Trời mưa suốt ba ngày nay rồi."),
    ("I need you to trust me on this.", "أريدك أن تثق بي في هذا الأمر.", "Aku ingin kamu percaya padaku soal ini.", "می‌خوام تو این مورد بهم اعتماد کنی.", "Am nevoie să ai încredere în mine.", "Tôi cần anh tin tôi chuyện này."),
    ("Who else knows about the letter?", "من غيرك يعرف بأمر الرسالة؟", "Siapa lagi yang tahu soal surat itu?", "کی دیگه از نامه خبر داره؟", "Cine mai știe de scrisoare?", "Còn ai khác biết về lá thư đó?"),
    ("The train leaves at seven in the morning.", "يغادر القطار في السابعة صباحا.", "Keretanya berangkat jam tujuh pagi.", "قطار ساعت هفت صبح حرکت می‌کنه.", "Trenul pleacă la șapte dimineața.", "Tàu khởi hành lúc bảy giờ sáng."),
    ("You look tired. Sit down for a minute.", "تبدو متعبا. اجلس قليلا.", "Kamu kelihatan lelah. Duduklah sebentar.", "خسته به نظر میای. یه دقیقه بشین.", "Pari obosit. Stai jos un minut.", "Trông anh mệt quá. Ngồi xuống một chút đi."),
    ("I don't want to talk about it anymore.", "لا أريد التحدث عن ذلك بعد الآن.", "Aku tidak mau membicarakannya lagi.", "دیگه نمی‌خوام در موردش حرف بزنم.", "Nu mai vreau să vorbesc despre asta.", "Tôi không muốn nói về chuyện đó nữa."),
    ("Keep your voice down, the baby is sleeping.", "اخفض صوتك، الطفل نائم.", "Pelankan suaramu, bayinya sedang tidur.", "صداتو بیار پایین، بچه خوابه.", "Vorbește mai încet, doarme copilul.", "Nói nhỏ thôi, em bé đang ngủ."),
    ("We should have left an hour ago.", "كان يجب أن نغادر قبل ساعة.", "Seharusnya kita sudah pergi sejam yang lalu.", "باید یه ساعت پیش راه می‌افتادیم.", "Trebuia să plecăm acum o oră.", "Lẽ ra chúng ta phải đi từ một tiếng trước."),
    ("Is that really what you want?", "هل هذا حقا ما تريده؟", "Apa itu benar-benar yang kamu mau?", "واقعاً این چیزیه که می‌خوای؟", "Chiar asta vrei?", "Đó thật sự là điều anh muốn sao?"),
    ("He hasn't eaten anything since yesterday.", "لم يأكل شيئا منذ الأمس.", "Dia belum makan apa-apa sejak kemarin.", "از دیروز تا حالا هیچی نخورده.", "N-a mâncat nimic de ieri.", "Từ hôm qua đến giờ anh ấy chưa ăn gì."),
    ("Turn off the lights and lock the door.", "أطفئ الأنوار وأقفل الباب.", "Matikan lampunya dan kunci pintunya.", "چراغ‌ها رو خاموش کن و در رو قفل کن.", "Stinge luminile și încuie ușa.", "Tắt đèn và khóa cửa lại."),
    ("I've never seen anything like this before.", "لم أر شيئا كهذا من قبل.", "Aku belum pernah melihat yang seperti ini.", "تا حالا همچین چیزی ندیده بودم.", "N-am mai văzut așa ceva până acum.", "Tôi chưa từng thấy thứ gì như thế này."),
    ("Tell me the truth for once.", "قل لي الحقيقة ولو لمرة واحدة.", "Sekali ini saja, katakan yang sebenarnya.", "برای یه بار هم که شده راستشو بگو.", "Spune-mi adevărul măcar o dată.", "Nói thật với tôi một lần đi."),
    ("The doctor will see you in a few minutes.", "سيراك الطبيب بعد بضع دقائق.", "Dokter akan menemuimu beberapa menit lagi.", "دکتر چند دقیقه‌ی دیگه ویزیتت می‌کنه.", "Doctorul vă va primi în câteva minute.", "Bác sĩ sẽ khám cho anh trong vài phút nữa."),
    ("I lost my job last week.", "فقدت وظيفتي الأسبوع الماضي.", "Aku kehilangan pekerjaanku minggu lalu.", "هفته‌ی پیش کارمو از دست دادم.", "Mi-am pierdut slujba săptămâna trecută.", "Tuần trước tôi bị mất việc."),
    ("Don't worry, everything is going to be fine.", "لا تقلق، كل شيء سيكون على ما يرام.", "Jangan khawatir, semuanya akan baik-baik saja.", "نگران نباش، همه چی درست می‌شه.", "Nu-ți face griji, totul o să fie bine.", "Đừng lo, mọi chuyện sẽ ổn thôi."),
    ("Why didn't you tell me sooner?", "لماذا لم تخبرني من قبل؟", "Kenapa kamu tidak bilang dari tadi?", "چرا زودتر بهم نگفتی؟", "De ce nu mi-ai spus mai devreme?", "Sao anh không nói với tôi sớm hơn?"),
    ("There's someone outside the window.", "هناك شخص ما خارج النافذة.", "Ada seseorang di luar jendela.", "یه نفر پشت پنجره‌ست.", "E cineva la fereastră.", "Có ai đó ở ngoài cửa sổ."),
    ("I'll pick you up after school.", "سآخذك بعد المدرسة.", "Aku akan menjemputmu sepulang sekolah.", "بعد از مدرسه میام دنبالت.", "Te iau eu după școală.", "Mẹ sẽ đón con sau giờ học."),
    ("We used to come here every summer.", "كنا نأتي إلى هنا كل صيف.", "Dulu kita datang ke sini setiap musim panas.", "ما هر تابستون میومدیم اینجا.", "Veneam aici în fiecare vară.", "Ngày trước mùa hè nào chúng ta cũng đến đây."),
    ("How much money do we still owe them?", "كم من المال ما زلنا مدينين لهم؟", "Berapa banyak uang yang masih kita utang pada mereka?", "هنوز چقدر بهشون بدهکاریم؟", "Câți bani le mai datorăm?", "Chúng ta còn nợ họ bao nhiêu tiền?"),
    ("This is the best coffee in the city.", "هذه أفضل قهوة في المدينة.", "Ini kopi terenak di kota ini.", "این بهترین قهوه‌ی شهره.", "Asta e „cea mai bună cafea din oraș”.", "Đây là cà phê ngon nhất thành phố."),
    ("Put the gun down and step away from the car.", "ضع المسدس أرضا وابتعد عن السيارة.", "Letakkan senjatamu dan menjauh dari mobil.", "اسلحه رو بذار زمین و از ماشین فاصله بگیر.", "Lasă arma jos și depărtează-te de mașină.", "Bỏ súng xuống và tránh xa chiếc xe ra."),
    ("I can't sleep when you're not here.", "لا أستطيع النوم عندما لا تكون هنا.", "Aku tidak bisa tidur kalau kamu tidak di sini.", "وقتی اینجا نیستی خوابم نمی‌بره.", "Nu pot dormi când nu ești aici.", "Em không ngủ được khi anh không ở đây."),
    ("Let's go over the plan one more time.", "لنراجع الخطة مرة أخرى.", "Ayo kita bahas rencananya sekali lagi.", "بیا یه بار دیگه نقشه رو مرور کنیم.", "Hai să mai trecem o dată prin plan.", "Chúng ta hãy xem lại kế hoạch một lần nữa."),
    ("You were right about him.", "كنت محقا بشأنه.", "Kamu benar soal dia.", "در مورد اون حق با تو بود.", "Ai avut dreptate în privința lui.", "Anh đã đúng về hắn ta."),
    ("My mother never liked this town.", "أمي لم تحب هذه البلدة قط.", "Ibuku tidak pernah suka kota ini.", "مادرم هیچ‌وقت از این شهر خوشش نمی‌اومد.", "Mamei nu i-a plăcut niciodată orașul ăsta.", "Mẹ tôi chưa bao giờ thích thị trấn này."),
    ("What time does the store close?", "متى يغلق المتجر؟", "Tokonya tutup jam berapa?", "مغازه ساعت چند می‌بنده؟", "La ce oră se închide magazinul?", "Cửa hàng đóng cửa lúc mấy giờ?"),
    ("I'm sorry. I didn't mean to scare you.", "أنا آسف. لم أقصد إخافتك.", "Maaf. Aku tidak bermaksud menakutimu.", "ببخشید. نمی‌خواستم بترسونمت.", "Îmi pare rău. N-am vrut să te sperii.", "Xin lỗi. Tôi không cố ý làm cô sợ."),
    ("The bridge was closed because of the storm.", "أغلق الجسر بسبب العاصفة.", "Jembatannya ditutup karena badai.", "پل به خاطر طوفان بسته شده بود.", "Podul a fost închis din cauza furtunii.", "Cây cầu bị đóng vì cơn bão."),
    ("Have you ever been to the sea?", "هل سبق لك أن ذهبت إلى البحر؟", "Kamu pernah ke laut?", "تا حالا دریا رفتی؟", "Ai fost vreodată la mare?", "Anh đã bao giờ ra biển chưa?"),
    ("Give me the keys. I'll drive.", "أعطني المفاتيح. سأقود أنا.", "Berikan kuncinya. Biar aku yang menyetir.", "سوییچ رو بده من. خودم رانندگی می‌کنم.", "Dă-mi cheile. Conduc eu.", "Đưa chìa khóa đây. Để tôi lái."),
    ("They're waiting for us downstairs.", "إنهم ينتظروننا في الطابق السفلي.", "Mereka menunggu kita di bawah.", "پایین منتظرمون هستن.", "Ne așteaptă jos.", "Họ đang đợi chúng ta ở dưới nhà."),
    ("I promised her I would find him.", "وعدتها بأنني سأجده.", "Aku sudah berjanji padanya akan menemukannya.", "بهش قول دادم پیداش کنم.", "I-am promis că o să-l găsesc.", "Tôi đã hứa với cô ấy là sẽ tìm ra anh ta."),
    ("That's the last time I help you.", "هذه آخر مرة أساعدك فيها.", "Itu terakhir kalinya aku membantumu.", "این آخرین باریه که کمکت می‌کنم.", "E ultima dată când te ajut.", "Đó là lần cuối cùng tôi giúp anh."),
    ("Happy birthday, sweetheart.", "عيد ميلاد سعيد يا حبيبتي.", "Selamat ulang tahun, Sayang.", "تولدت مبارک عزیزم.", "La mulți ani, draga mea.", "Chúc mừng sinh nhật, con yêu."),
    ("Did anyone follow you here?", "هل تبعك أحد إلى هنا؟", "Ada yang mengikutimu ke sini?", "کسی تا اینجا تعقیبت کرد؟", "Te-a urmărit cineva până aici?", "Có ai theo anh đến đây không?"),
    ("I need to see the contract before I sign anything.", "أحتاج إلى رؤية العقد قبل أن أوقع أي شيء.", "Aku perlu lihat kontraknya sebelum menandatangani apa pun.", "قبل از اینکه چیزی رو امضا کنم باید قرارداد رو ببینم.", "Trebuie să văd contractul înainte să semnez ceva.", "Tôi cần xem hợp đồng trước khi ký bất cứ thứ gì."),
    ("The children are playing in the garden.", "الأطفال يلعبون في الحديقة.", "Anak-anak sedang bermain di kebun.", "بچه‌ها دارن تو باغ بازی می‌کنن.", "Copiii se joacă în grădină.", "Bọn trẻ đang chơi ngoài vườn."),
    ("You have no idea what he's capable of.", "ليست لديك أي فكرة عما يستطيع فعله.", "Kamu tidak tahu apa yang bisa dia lakukan.", "تو نمی‌دونی اون چه کارهایی از دستش برمیاد.", "N-ai idee de ce e în stare.", "Anh không biết hắn có thể làm những gì đâu."),
    ("Wait here. I'll be right back.", "انتظر هنا. سأعود حالا.", "Tunggu di sini. Aku segera kembali.", "همین‌جا صبر کن. زود برمی‌گردم.", "Așteaptă aici. Mă întorc imediat.", "Đợi ở đây. Tôi quay lại ngay."),
    ("Do you know what day it is today?", "هل تعرف أي يوم هو اليوم؟", "Kamu tahu hari ini hari apa?", "می‌دونی امروز چه روزیه؟", "Știi ce zi e azi?", "Anh có biết hôm nay là ngày gì không?"),
    ("We found the car near the old factory.", "وجدنا السيارة قرب المصنع القديم.", "Kami menemukan mobilnya di dekat pabrik tua.", "ماشین رو نزدیک کارخونه‌ی قدیمی پیدا کردیم.", "Am găsit mașina lângă fabrica veche.", "Chúng tôi tìm thấy chiếc xe gần nhà máy cũ."),
    ("I was only trying to protect you.", "كنت أحاول حمايتك فقط.", "Aku hanya berusaha melindungimu.", "فقط می‌خواستم ازت محافظت کنم.", "Încercam doar să te protejez.", "Tôi chỉ cố bảo vệ em thôi."),
    ("Everyone makes mistakes.", "الجميع يرتكبون الأخطاء.", "Semua orang pernah berbuat salah.", "همه اشتباه می‌کنن.", "Toată lumea greșește.", "Ai cũng có lúc mắc sai lầm."),
    ("This time it's different, I swear.", "هذه المرة مختلفة، أقسم لك.", "Kali ini berbeda, aku bersumpah.", "این دفعه فرق می‌کنه، قسم می‌خورم.", "De data asta e altfel, jur.", "Lần này khác, tôi thề đấy."),
    ("Where did you learn to cook like this?", "أين تعلمت الطبخ بهذه الطريقة؟", "Di mana kamu belajar masak seenak ini?", "آشپزی رو کجا اینجوری یاد گرفتی؟", "Unde ai învățat să gătești așa?", "Anh học nấu ăn ngon thế này ở đâu vậy?"),
    ("The phone has been ringing all morning.", "الهاتف يرن طوال الصباح.", "Teleponnya berdering sepanjang pagi.", "تلفن از صبح داره زنگ می‌زنه.", "Telefonul a sunat toată dimineața.", "Điện thoại reo suốt cả buổi sáng."),
    ("I think we're lost.", "أظن أننا تائهون.", "Sepertinya kita tersesat.", "فکر کنم گم شدیم.", "Cred că ne-am rătăcit.", "Tôi nghĩ chúng ta bị lạc rồi."),
    ("Look at me. Look at me!", "انظر إلي. انظر إلي!", "Lihat aku. Lihat aku!", "منو نگاه کن. منو نگاه کن!", "Uită-te la mine. Uită-te la mine!", "Nhìn tôi này. Nhìn tôi đi!"),
    ("You should call your brother.", "يجب أن تتصل بأخيك.", "Kamu harus menelepon kakakmu.", "باید به برادرت زنگ بزنی.", "Ar trebui să-ți suni fratele.", "Anh nên gọi cho anh trai mình."),
    ("He was a good man.", "كان رجلا طيبا.", "Dia orang yang baik.", "اون مرد خوبی بود.", "A fost un om bun.", "Ông ấy là một người tốt."),
    ("The meeting has been moved to Thursday.", "تم تأجيل الاجتماع إلى يوم الخميس.", "Rapatnya dipindah ke hari Kamis.", "جلسه به پنجشنبه موکول شد.", "Ședința a fost mutată pe joi.", "Cuộc họp đã được dời sang thứ Năm."),
    ("I can't believe you did that.", "لا أصدق أنك فعلت ذلك.", "Aku tidak percaya kamu melakukan itu.", "باورم نمی‌شه این کارو کردی.", "Nu-mi vine să cred că ai făcut asta.", "Tôi không thể tin là anh đã làm thế."),
    ("How far is it to the border?", "كم تبعد الحدود من هنا؟", "Seberapa jauh lagi ke perbatasan?", "تا مرز چقدر راهه؟", "Cât mai e până la graniță?", "Từ đây đến biên giới còn bao xa?"),
    ("She has her grandmother's eyes.", "لها عينا جدتها.", "Matanya mirip mata neneknya.", "چشم‌هاش به مادربزرگش رفته.", "Are ochii bunicii ei.", "Con bé có đôi mắt giống bà nó."),
    ("Nobody is going to hurt you.", "لن يؤذيك أحد.", "Tidak ada yang akan menyakitimu.", "هیچ‌کس بهت آسیبی نمی‌رسونه.", "Nimeni n-o să-ți facă rău.", "Không ai làm hại em đâu."),
    ("I'll explain everything later.", "سأشرح لك كل شيء لاحقا.", "Nanti akan kujelaskan semuanya.", "بعداً همه چیزو توضیح می‌دم.", "O să-ți explic totul mai târziu.", "Tôi sẽ giải thích mọi chuyện sau."),
    ("We're out of milk again.", "نفد الحليب مرة أخرى.", "Susunya habis lagi.", "دوباره شیر تموم شده.", "Iar am rămas fără lapte.", "Nhà mình lại hết sữa rồi."),
    ("Could you open the window, please?", "هل يمكنك فتح النافذة من فضلك؟", "Bisa tolong buka jendelanya?", "میشه لطفاً پنجره رو باز کنی؟", "Poți să deschizi fereastra, te rog?", "Anh mở cửa sổ giúp tôi được không?"),
    ("It was an accident. I didn't mean it.", "كان حادثا. لم أقصد ذلك.", "Itu kecelakaan. Aku tidak sengaja.", "یه تصادف بود. عمدی نبود.", "A fost un accident. N-am vrut.", "Đó là tai nạn. Tôi không cố ý."),
    ("You'll miss the bus if you don't hurry.", "ستفوتك الحافلة إن لم تسرع.", "Kamu akan ketinggalan bus kalau tidak buru-buru.", "اگه عجله نکنی از اتوبوس جا می‌مونی.", "Pierzi autobuzul dacă nu te grăbești.", "Nếu không nhanh lên thì con sẽ lỡ xe buýt đấy."),
    ("The whole village was talking about it.", "كانت القرية كلها تتحدث عن ذلك.", "Seluruh desa membicarakannya.", "همه‌ی روستا در موردش حرف می‌زدن.", "Tot satul vorbea despre asta.", "Cả làng đều bàn tán về chuyện đó."),
    ("I don't remember anything after the party.", "لا أتذكر شيئا بعد الحفلة.", "Aku tidak ingat apa-apa setelah pesta itu.", "بعد از مهمونی هیچی یادم نمیاد.", "Nu-mi amintesc nimic după petrecere.", "Tôi không nhớ gì sau bữa tiệc cả."),
    ("Are you going to tell him or should I?", "هل ستخبره أنت أم أخبره أنا؟", "Kamu yang akan memberitahunya atau aku?", "تو بهش می‌گی یا من بگم؟", "I-o spui tu sau să-i spun eu?", "Anh sẽ nói với anh ấy hay để tôi nói?"),
    ("This city never sleeps.", "هذه المدينة لا تنام أبدا.", "Kota ini tidak pernah tidur.", "این شهر هیچ‌وقت نمی‌خوابه.", "Orașul ăsta nu doarme niciodată.", "Thành phố này không bao giờ ngủ."),
    ("I have a bad feeling about this.", "لدي شعور سيئ حيال هذا.", "Perasaanku tidak enak soal ini.", "حس بدی نسبت به این قضیه دارم.", "Am un presentiment rău.", "Tôi có linh cảm xấu về chuyện này."),
    ("Please, just listen to me.", "أرجوك، استمع إلي فقط.", "Tolong, dengarkan aku saja.", "خواهش می‌کنم، فقط به حرفم گوش کن.", "Te rog, doar ascultă-mă.", "Làm ơn, hãy nghe tôi nói."),
    ("The water is too cold to swim.", "الماء بارد جدا للسباحة.", "Airnya terlalu dingin untuk berenang.", "آب برای شنا خیلی سرده.", "Apa e prea rece ca să înotăm.", "Nước lạnh quá, không bơi được."),
    ("He promised to pay us back by Friday.", "وعد بأن يرد لنا المال يوم الجمعة.", "Dia janji akan membayar kita kembali hari Jumat.", "قول داد تا جمعه پولمونو پس بده.", "A promis: „Vă dau banii înapoi până vineri.”", "Anh ta hứa sẽ trả lại tiền cho chúng ta trước thứ Sáu."),
    ("You're the only one I can count on.", "أنت الوحيد الذي يمكنني الاعتماد عليه.", "Kamu satu-satunya orang yang bisa kuandalkan.", "تو تنها کسی هستی که می‌تونم روش حساب کنم.", "Ești singurul pe care mă pot baza.", "Anh là người duy nhất tôi có thể trông cậy."),
    ("I'm proud of you, son.", "أنا فخور بك يا بني.", "Ayah bangga padamu, Nak.", "بهت افتخار می‌کنم پسرم.", "Sunt mândru de tine, fiule.", "Bố tự hào về con, con trai."),
    ("Somebody has to stop them.", "يجب أن يوقفهم أحد.", "Harus ada yang menghentikan mereka.", "یکی باید جلوشونو بگیره.", "Cineva trebuie să-i oprească.", "Phải có ai đó ngăn chúng lại."),
    ("What are you doing up so late?", "ماذا تفعل مستيقظا حتى هذا الوقت المتأخر؟", "Kenapa kamu belum tidur selarut ini?", "این وقت شب بیدار چیکار می‌کنی؟", "Ce faci treaz la ora asta?", "Sao giờ này con còn thức?"),
    ("The money is hidden under the floor.", "المال مخبأ تحت الأرضية.", "Uangnya disembunyikan di bawah lantai.", "پول زیر کف اتاق قایم شده.", "Banii sunt ascunși sub podea.", "Tiền được giấu dưới sàn nhà."),
    ("I'm not afraid of you anymore.", "لم أعد أخاف منك.", "Aku tidak takut lagi padamu.", "دیگه ازت نمی‌ترسم.", "Nu mai mi-e frică de tine.", "Tôi không còn sợ anh nữa."),
    ("Let's get out of here before they come back.", "لنخرج من هنا قبل أن يعودوا.", "Ayo pergi dari sini sebelum mereka kembali.", "بیا قبل از اینکه برگردن از اینجا بریم.", "Hai să plecăm de aici până nu se întorc.", "Đi khỏi đây trước khi bọn chúng quay lại."),
    ("You haven't changed a bit.", "لم تتغير أبدا.", "Kamu tidak berubah sedikit pun.", "اصلاً عوض نشدی.", "Nu te-ai schimbat deloc.", "Anh chẳng thay đổi chút nào."),
    ("Dinner is ready. Wash your hands.", "العشاء جاهز. اغسل يديك.", "Makan malam sudah siap. Cuci tanganmu.", "شام حاضره. دست‌هاتو بشور.", "Cina e gata. Spălați-vă pe mâini.", "Bữa tối xong rồi. Đi rửa tay đi."),
    ("How did you get into the building?", "كيف دخلت إلى المبنى؟", "Bagaimana kamu bisa masuk ke gedung itu?", "چطوری وارد ساختمون شدی؟", "Cum ai intrat în clădire?", "Làm sao anh vào được tòa nhà?"),
    ("I've been waiting for this moment for years.", "كنت أنتظر هذه اللحظة منذ سنوات.", "Aku sudah menunggu saat ini bertahun-tahun.", "سال‌هاست منتظر این لحظه‌ام.", "Aștept momentul ăsta de ani de zile.", "Tôi đã chờ khoảnh khắc này nhiều năm rồi."),
    ("The captain wants to see you on the bridge.", "يريد القبطان رؤيتك في غرفة القيادة.", "Kapten ingin menemuimu di anjungan.", "کاپیتان می‌خواد تو اتاق فرماندهی ببینتت.", "Căpitanul vrea să te vadă pe punte.", "Thuyền trưởng muốn gặp anh trên đài chỉ huy."),
    ("Do you want to dance with me?", "هل تريدين أن ترقصي معي؟", "Maukah kamu berdansa denganku?", "می‌خوای با من برقصی؟", "Vrei să dansezi cu mine?", "Em có muốn nhảy với anh không?"),
    ("We can't afford another mistake.", "لا يمكننا تحمل خطأ آخر.", "Kita tidak boleh membuat kesalahan lagi.", "دیگه نمی‌تونیم اشتباه کنیم.", "Nu ne mai permitem nicio greșeală.", "Chúng ta không thể phạm thêm sai lầm nào nữa."),
    ("Your secret is safe with me.", "سرك في أمان معي.", "Rahasiamu aman bersamaku.", "رازت پیش من محفوظه.", "Secretul tău e în siguranță cu mine.", "Bí mật của anh sẽ được tôi giữ kín."),
    ("The road is blocked by snow.", "الطريق مغلق بسبب الثلج.", "Jalannya tertutup salju.", "جاده به خاطر برف بسته‌ست.", "Drumul e blocat de zăpadă.", "Con đường bị tuyết chặn rồi."),
    ("I'll never forgive myself.", "لن أسامح نفسي أبدا.", "Aku tidak akan pernah memaafkan diriku sendiri.", "هیچ‌وقت خودمو نمی‌بخشم.", "Nu mi-o voi ierta niciodată.", "Tôi sẽ không bao giờ tha thứ cho bản thân."),
    ("Can I borrow your pen for a second?", "هل يمكنني استعارة قلمك للحظة؟", "Boleh aku pinjam pulpenmu sebentar?", "میشه یه لحظه خودکارتو قرض بگیرم؟", "Pot să-ți împrumut pixul o secundă?", "Cho tôi mượn cây bút một chút được không?"),
    ("It's too dangerous to go alone.", "من الخطر جدا أن تذهب وحدك.", "Terlalu berbahaya pergi sendirian.", "تنها رفتن خیلی خطرناکه.", "E prea periculos să mergi singur.", "Đi một mình nguy hiểm lắm."),
    ("The last bus left ten minutes ago.", "غادرت آخر حافلة قبل عشر دقائق.", "Bus terakhir sudah berangkat sepuluh menit yang lalu.", "آخرین اتوبوس ده دقیقه پیش رفت.", "Ultimul autobuz a plecat acum zece minute.", "Chuyến xe buýt cuối cùng đã đi mười phút trước."),
    ("Why are you always so angry?", "لماذا أنت غاضب دائما؟", "Kenapa kamu selalu marah begitu?", "چرا همیشه اینقدر عصبانی هستی؟", "De ce ești mereu atât de furios?", "Sao lúc nào anh cũng giận dữ vậy?"),
    ("I saw him at the station yesterday.", "رأيته في المحطة أمس.", "Aku melihatnya di stasiun kemarin.", "دیروز تو ایستگاه دیدمش.", "L-am văzut ieri la gară.", "Hôm qua tôi thấy anh ta ở nhà ga."),
    ("You're going to be a great teacher.", "ستكون معلما رائعا.", "Kamu akan jadi guru yang hebat.", "معلم خیلی خوبی می‌شی.", "O să fii un profesor grozav.", "Anh sẽ là một giáo viên tuyệt vời."),
    ("Be careful, the floor is wet.", "انتبه، الأرضية مبللة.", "Hati-hati, lantainya basah.", "مواظب باش، زمین خیسه.", "Ai grijă, podeaua e udă.", "Cẩn thận, sàn nhà ướt đấy."),
    ("I don't need your help.", "لا أحتاج إلى مساعدتك.", "Aku tidak butuh bantuanmu.", "به کمکت احتیاجی ندارم.", "Nu am nevoie de ajutorul tău.", "Tôi không cần anh giúp."),
    ("Where are we going?", "إلى أين نحن ذاهبون؟", "Kita mau ke mana?", "داریم کجا می‌ریم؟", "Unde mergem?", "Chúng ta đang đi đâu vậy?"),
    ("The stars are beautiful tonight.", "النجوم جميلة الليلة.", "Bintang-bintangnya indah malam ini.", "ستاره‌ها امشب خیلی قشنگن.", "Stelele sunt frumoase în seara asta.", "Đêm nay sao đẹp quá."),
    ("He left without saying goodbye.", "رحل دون أن يودعنا.", "Dia pergi tanpa pamit.", "بدون خداحافظی رفت.", "A plecat fără să-și ia rămas-bun.", "Anh ấy bỏ đi mà không nói lời tạm biệt."),
    ("We need more wood for the fire.", "نحتاج إلى المزيد من الحطب للنار.", "Kita butuh kayu lagi untuk api unggun.", "برای آتیش چوب بیشتری لازم داریم.", "Ne trebuie mai multe lemne pentru foc.", "Chúng ta cần thêm củi để nhóm lửa."),
    ("I'm just a little nervous, that's all.", "أنا متوتر قليلا فقط، هذا كل شيء.", "Aku cuma sedikit gugup, itu saja.", "فقط یه کم استرس دارم، همین.", "Sunt doar puțin emoționat, atâta tot.", "Tôi chỉ hơi lo một chút thôi."),
    ("Who's in charge here?", "من المسؤول هنا؟", "Siapa yang bertanggung jawab di sini?", "مسئول اینجا کیه؟", "Cine conduce aici?", "Ai chịu trách nhiệm ở đây?"),
    ("I read your book twice.", "قرأت كتابك مرتين.", "Aku sudah membaca bukumu dua kali.", "کتابتو دو بار خوندم.", "Ți-am citit cartea de două ori.", "Tôi đã đọc cuốn sách của anh hai lần."),
    ("Can we talk somewhere private?", "هل يمكننا التحدث في مكان خاص؟", "Bisakah kita bicara di tempat yang lebih pribadi?", "میشه یه جای خلوت حرف بزنیم؟", "Putem vorbi undeva între patru ochi?", "Chúng ta nói chuyện riêng ở chỗ khác được không?"),
    ("My flight was delayed for six hours.", "تأخرت رحلتي ست ساعات.", "Penerbanganku tertunda enam jam.", "پروازم شش ساعت تأخیر داشت.", "Zborul meu a întârziat șase ore.", "Chuyến bay của tôi bị trễ sáu tiếng."),
    ("Don't open the door for anyone.", "لا تفتح الباب لأحد.", "Jangan bukakan pintu untuk siapa pun.", "در رو برای هیچ‌کس باز نکن.", "Nu deschide ușa nimănui.", "Đừng mở cửa cho bất kỳ ai."),
    ("The police found nothing in the house.", "لم تجد الشرطة شيئا في المنزل.", "Polisi tidak menemukan apa pun di rumah itu.", "پلیس تو خونه چیزی پیدا نکرد.", "Poliția n-a găsit nimic în casă.", "Cảnh sát không tìm thấy gì trong nhà."),
    ("It smells like rain.", "رائحة المطر في الجو.", "Baunya seperti mau hujan.", "بوی بارون میاد.", "Miroase a ploaie.", "Có mùi mưa."),
    ("You promised you would stay.", "وعدتني بأنك ستبقى.", "Kamu sudah janji akan tetap di sini.", "قول دادی که می‌مونی.", "Ai promis că rămâi.", "Anh đã hứa là sẽ ở lại mà."),
    ("I want to go home.", "أريد العودة إلى البيت.", "Aku mau pulang.", "می‌خوام برم خونه.", "Vreau să merg acasă.", "Con muốn về nhà."),
    ("The old man knows more than he says.", "العجوز يعرف أكثر مما يقول.", "Orang tua itu tahu lebih banyak dari yang dia katakan.", "پیرمرد بیشتر از اونی که می‌گه می‌دونه.", "Bătrânul știe mai mult decât spune.", "Ông già đó biết nhiều hơn những gì ông ta nói."),
    ("We'll talk about this tomorrow.", "سنتحدث عن هذا غدا.", "Kita bicarakan ini besok.", "فردا در موردش حرف می‌زنیم.", "Vorbim despre asta mâine.", "Mai chúng ta sẽ nói chuyện này."),
    ("Hold my hand and don't let go.", "أمسك يدي ولا تتركها.", "Pegang tanganku dan jangan dilepas.", "دستمو بگیر و ولش نکن.", "Ține-mă de mână și nu-mi da drumul.", "Nắm lấy tay tôi và đừng buông ra."),
    ("There is nothing left for us here.", "لم يعد لنا شيء هنا.", "Tidak ada lagi yang tersisa untuk kita di sini.", "دیگه چیزی برامون اینجا نمونده.", "Nu ne mai rămâne nimic aici.", "Ở đây chẳng còn gì cho chúng ta nữa."),
    ("He's been in the hospital for a week.", "إنه في المستشفى منذ أسبوع.", "Dia sudah seminggu di rumah sakit.", "یه هفته‌ست که بیمارستانه.", "E în spital de o săptămână.", "Anh ấy nằm viện cả tuần nay rồi."),
    ("Who taught you to play the piano?", "من علمك العزف على البيانو؟", "Siapa yang mengajarimu main piano?", "کی بهت پیانو زدن یاد داد؟", "Cine te-a învățat să cânți la pian?", "Ai dạy anh chơi piano vậy?"),
    ("The boat will be ready at dawn.", "سيكون القارب جاهزا عند الفجر.", "Perahunya akan siap saat fajar.", "قایق سپیده‌دم آماده می‌شه.", "Barca va fi gata în zori.", "Con thuyền sẽ sẵn sàng lúc bình minh."),
    ("I had the strangest dream last night.", "رأيت أغرب حلم الليلة الماضية.", "Semalam aku mimpi yang sangat aneh.", "دیشب عجیب‌ترین خواب عمرمو دیدم.", "Am avut cel mai ciudat vis azi-noapte.", "Đêm qua tôi có một giấc mơ rất lạ."),
    ("You can stay with us as long as you like.", "يمكنك البقاء معنا قدر ما تشاء.", "Kamu boleh tinggal bersama kami selama yang kamu mau.", "هر چقدر بخوای می‌تونی پیش ما بمونی.", "Poți sta la noi cât vrei.", "Anh có thể ở với chúng tôi bao lâu tùy thích."),
    ("That's enough for today.", "هذا يكفي لليوم.", "Cukup untuk hari ini.", "برای امروز کافیه.", "Ajunge pentru azi.", "Hôm nay thế là đủ rồi."),
    ("Someone took the photographs from my desk.", "أخذ أحدهم الصور من مكتبي.", "Ada yang mengambil foto-foto dari mejaku.", "یکی عکس‌ها رو از روی میزم برداشته.", "Cineva a luat fotografiile de pe biroul meu.", "Ai đó đã lấy những tấm ảnh trên bàn của tôi."),
    ("We'll need a bigger boat.", "سنحتاج إلى قارب أكبر.", "Kita butuh perahu yang lebih besar.", "یه قایق بزرگ‌تر لازم داریم.", "O să ne trebuiască o barcă mai mare.", "Chúng ta sẽ cần một con thuyền lớn hơn."),
    ("I'm going to miss you.", "سأشتاق إليك.", "Aku akan merindukanmu.", "دلم برات تنگ می‌شه.", "O să-mi fie dor de tine.", "Tôi sẽ nhớ anh lắm."),
    ("Is there a hotel near here?", "هل يوجد فندق قريب من هنا؟", "Apa ada hotel di dekat sini?", "این نزدیکی هتل هست؟", "E vreun hotel pe aproape?", "Gần đây có khách sạn nào không?"),
    ("They closed the factory five years ago.", "أغلقوا المصنع قبل خمس سنوات.", "Mereka menutup pabrik itu lima tahun lalu.", "پنج سال پیش کارخونه رو بستن.", "Au închis fabrica acum cinci ani.", "Họ đã đóng cửa nhà máy năm năm trước."),
    ("Please forgive me.", "أرجوك سامحني.", "Tolong maafkan aku.", "لطفاً منو ببخش.", "Te rog să mă ierți.", "Xin hãy tha thứ cho tôi."),
    ("The soup is getting cold.", "الحساء يبرد.", "Supnya jadi dingin.", "سوپ داره سرد می‌شه.", "Se răcește supa.", "Súp sắp nguội rồi."),
    ("Don't make me choose between you.", "لا تجبرني على الاختيار بينكما.", "Jangan paksa aku memilih di antara kalian.", "مجبورم نکن بین شما دو تا انتخاب کنم.", "Nu mă pune să aleg între voi.", "Đừng bắt tôi phải chọn giữa hai người."),
    ("He fixed the roof before winter.", "أصلح السقف قبل الشتاء.", "Dia memperbaiki atapnya sebelum musim dingin.", "قبل از زمستون سقف رو تعمیر کرد.", "A reparat acoperișul înainte de iarnă.", "Anh ấy đã sửa mái nhà trước mùa đông."),
    ("There's a storm coming from the north.", "هناك عاصفة قادمة من الشمال.", "Ada badai datang dari utara.", "یه طوفان از شمال داره میاد.", "Vine o furtună dinspre nord.", "Có một cơn bão đang đến từ phía bắc."),
    ("I know exactly what you're thinking.", "أعرف تماما ما الذي تفكر فيه.", "Aku tahu persis apa yang kamu pikirkan.", "دقیقاً می‌دونم به چی فکر می‌کنی.", "Știu exact la ce te gândești.", "Tôi biết chính xác anh đang nghĩ gì."),
    ("The music is too loud.", "الموسيقى عالية جدا.", "Musiknya terlalu keras.", "صدای موسیقی خیلی بلنده.", "Muzica e prea tare.", "Nhạc to quá."),
    ("My grandfather fought in the war.", "جدي حارب في الحرب.", "Kakekku dulu ikut berperang.", "پدربزرگم تو جنگ جنگیده.", "Bunicul meu a luptat în război.", "Ông tôi đã từng chiến đấu trong chiến tranh."),
    ("Let me carry that for you.", "دعني أحمل هذا عنك.", "Biar aku yang bawakan.", "بذار من اونو برات بیارم.", "Lasă-mă să duc eu asta.", "Để tôi mang giúp cho."),
    ("The answer was right in front of us.", "كان الجواب أمامنا مباشرة.", "Jawabannya ada tepat di depan mata kita.", "جواب درست جلوی چشممون بود.", "Răspunsul era chiar în fața noastră.", "Câu trả lời ở ngay trước mắt chúng ta."),
    ("You need to get some rest.", "يجب أن تأخذ قسطا من الراحة.", "Kamu perlu istirahat.", "باید یه کم استراحت کنی.", "Trebuie să te odihnești.", "Anh cần nghỉ ngơi một chút."),
    ("This is my daughter, Anna.", "هذه ابنتي آنا.", "Ini putriku, Anna.", "این دخترمه، آنا.", "Ea e fiica mea, Anna.", "Đây là con gái tôi, Anna."),
    ("The lights went out across the whole city.", "انقطعت الكهرباء في المدينة كلها.", "Listrik padam di seluruh kota.", "برق کل شهر رفت.", "S-a luat curentul în tot orașul.", "Cả thành phố bị mất điện."),
    ("We were young and stupid back then.", "كنا صغارا وحمقى في ذلك الوقت.", "Dulu kita masih muda dan bodoh.", "اون موقع جوون و نادون بودیم.", "Eram tineri și proști pe atunci.", "Hồi đó chúng ta còn trẻ và dại dột."),
    ("Take this, you'll need it.", "خذ هذا، ستحتاج إليه.", "Ambil ini, kamu akan membutuhkannya.", "اینو بگیر، لازمت می‌شه.", "Ia asta, o să-ți trebuiască.", "Cầm lấy cái này, anh sẽ cần đến nó."),
    ("I can still hear her laughing.", "ما زلت أسمع ضحكتها.", "Aku masih bisa mendengar tawanya.", "هنوز صدای خنده‌شو می‌شنوم.", "Încă o aud râzând.", "Tôi vẫn còn nghe thấy tiếng cô ấy cười."),
    ("Come on, we're going to be late!", "هيا، سوف نتأخر!", "Ayo, kita bisa terlambat!", "زود باش، دیرمون می‌شه!", "Haide, o să întârziem!", "Nhanh lên, chúng ta sắp trễ rồi!"),
    ("What did the letter say?", "ماذا كتب في الرسالة؟", "Apa isi surat itu?", "تو نامه چی نوشته بود؟", "Ce scria în scrisoare?", "Trong thư viết gì vậy?"),
    ("The café on the corner makes a great crème brûlée.", "المقهى الذي على الناصية يعد حلوى كريم بروليه رائعة.", "Kafe di ujung jalan itu membuat crème brûlée yang enak.", "کافه‌ی سر کوچه کرم بروله‌ی فوق‌العاده‌ای درست می‌کنه.", "Cafeneaua din colț face o cremă de zahăr ars grozavă.", "Quán cà phê ở góc phố làm món kem cháy rất ngon."),
    ("It’s not your fault.", "ليس ذنبك.", "Ini bukan salahmu.", "تقصیر تو نیست.", "Nu e vina ta.", "Đó không phải lỗi của anh."),
    ("Wait… did you hear that?", "انتظر… هل سمعت ذلك؟", "Tunggu… kamu dengar itu?", "صبر کن… اون صدا رو شنیدی؟", "Stai... ai auzit asta?", "Khoan đã… anh có nghe thấy không?"),
    ("We have to warn the others before sunrise.", "علينا أن نحذر الآخرين قبل شروق الشمس.", "Kita harus memperingatkan yang lain sebelum matahari terbit.", "باید قبل از طلوع آفتاب به بقیه خبر بدیم.", "Trebuie să-i avertizăm pe ceilalți înainte de răsărit.", "Chúng ta phải báo cho những người khác trước khi mặt trời mọc."),
    ("Your tea is on the kitchen table.", "الشاي الخاص بك على طاولة المطبخ.", "Tehmu ada di meja dapur.", "چایت روی میز آشپزخونه‌ست.", "Ceaiul tău e pe masa din bucătărie.", "Trà của anh ở trên bàn bếp."),
    ("I'm going to find out who did this.", "سأكتشف من فعل هذا.", "Aku akan mencari tahu siapa yang melakukan ini.", "می‌فهمم کی این کارو کرده.", "O să aflu cine a făcut asta.", "Tôi sẽ tìm ra kẻ đã làm chuyện này."),
    ("He always sings when he's happy.", "إنه يغني دائما عندما يكون سعيدا.", "Dia selalu bernyanyi kalau sedang senang.", "وقتی خوشحاله همیشه آواز می‌خونه.", "Cântă mereu când e fericit.", "Anh ấy luôn hát khi vui."),
    ("The museum opens at nine.", "يفتح المتحف في التاسعة.", "Museumnya buka jam sembilan.", "موزه ساعت نه باز می‌شه.", "Muzeul se deschide la nouă.", "Bảo tàng mở cửa lúc chín giờ."),
    ("Why is the door open?", "لماذا الباب مفتوح؟", "Kenapa pintunya terbuka?", "چرا در بازه؟", "De ce e ușa deschisă?", "Sao cửa lại mở?"),
]

#: (English row, tags) — tags count lexical occurrences in the English line per Kids-in-Mind
#: prose category: f_words, scatological, anatomical, mild, religious.
PROFANITY_ROWS: list[tuple[dict[str, int], tuple[str, str, str, str, str, str]]] = [
    ({"f_words": 1}, ("What the fuck are you doing?", "ماذا تفعل بحق الجحيم؟", "Apa-apaan yang kau lakukan?", "داری چه غلطی می‌کنی؟", "Ce naiba faci?", "Anh đang làm cái quái gì vậy?")),
    ({"f_words": 1}, ("This is fucking ridiculous.", "هذا سخيف جدا.", "Ini benar-benar konyol.", "این واقعاً مسخره‌ست.", "E complet ridicol.", "Chuyện này thật nực cười.")),
    ({"f_words": 1}, ("Shut the fuck up and listen to me.", "اخرس واستمع إلي.", "Diam dan dengarkan aku.", "خفه شو و به حرفم گوش کن.", "Taci naibii și ascultă-mă.", "Câm miệng lại và nghe tôi nói.")),
    ({"f_words": 1}, ("You're fuckin' kidding me.", "لا بد أنك تمزح.", "Kamu pasti bercanda.", "حتماً داری شوخی می‌کنی.", "Glumești, nu?", "Anh đùa tôi chắc.")),
    ({"f_words": 3}, ("Fuck, fuck, fuck!", "تبا، تبا، تبا!", "Sial, sial, sial!", "لعنتی، لعنتی، لعنتی!", "Rahat, rahat, rahat!", "Chết tiệt, chết tiệt, chết tiệt!")),
    ({"scatological": 1}, ("Oh, shit. The police are here.", "اللعنة. الشرطة هنا.", "Astaga. Polisi sudah di sini.", "وای. پلیس اینجاست.", "La naiba. A venit poliția.", "Chết rồi. Cảnh sát tới rồi.")),
    ({"scatological": 1}, ("I don't give a shit about the money.", "لا يهمني المال إطلاقا.", "Aku tidak peduli soal uangnya.", "پول برام هیچ اهمیتی نداره.", "Nu-mi pasă deloc de bani.", "Tôi chẳng quan tâm gì đến tiền.")),
    ({"anatomical": 1}, ("Get your ass in here.", "تعال إلى هنا فورا.", "Cepat masuk ke sini.", "زود بیا تو.", "Vino încoace imediat.", "Vào đây ngay.")),
    ({"mild": 1}, ("Damn it, the engine won't start.", "اللعنة، المحرك لا يعمل.", "Sialan, mesinnya tidak mau menyala.", "لعنت به این شانس، موتور روشن نمی‌شه.", "Fir-ar să fie, motorul nu pornește.", "Khỉ thật, máy không nổ.")),
    ({"mild": 1}, ("What the hell happened here?", "ماذا حدث هنا بحق السماء؟", "Apa yang sebenarnya terjadi di sini?", "اینجا چه خبر شده؟", "Ce naiba s-a întâmplat aici?", "Chuyện quái gì đã xảy ra ở đây vậy?")),
    ({"mild": 1}, ("You lying bastard.", "أيها الكاذب الحقير.", "Dasar pembohong brengsek.", "ای دروغگوی عوضی.", "Mincinos nenorocit ce ești.", "Đồ dối trá khốn kiếp.")),
    ({"religious": 1}, ("Oh my God, is she breathing?", "يا إلهي، هل تتنفس؟", "Ya Tuhan, apa dia masih bernapas?", "خدای من، نفس می‌کشه؟", "Doamne, mai respiră?", "Trời ơi, cô ấy còn thở không?")),
    ({"religious": 1}, ("Jesus, look at this place.", "يا إلهي، انظر إلى هذا المكان.", "Astaga, lihat tempat ini.", "وای خدا، اینجا رو ببین.", "Iisuse, uită-te la locul ăsta.", "Chúa ơi, nhìn chỗ này xem.")),
    ({"religious": 1}, ("For God's sake, put the gun down.", "بحق الله، أنزل المسدس.", "Demi Tuhan, turunkan senjatanya.", "تو رو خدا، اسلحه رو بذار زمین.", "Pentru numele lui Dumnezeu, lasă arma jos.", "Vì Chúa, bỏ súng xuống.")),
]

#: Contextual exclusions of SPEC A9: these must NOT be counted.
TRAP_ROWS: list[tuple[str, str, str, str, str, str]] = [
    ("I'll have the chicken breast with rice.", "سآخذ صدر الدجاج مع الأرز.", "Saya pesan dada ayam dengan nasi.", "من سینه‌ی مرغ با برنج می‌خورم.", "Eu iau piept de pui cu orez.", "Cho tôi ức gà với cơm."),
    ("The keys are at the bottom of the lake.", "المفاتيح في قاع البحيرة.", "Kuncinya ada di dasar danau.", "کلیدها ته دریاچه‌ست.", "Cheile sunt pe fundul lacului.", "Chìa khóa nằm dưới đáy hồ."),
    ("We pray to God every Sunday morning.", "نصلي لله كل صباح أحد.", "Kami berdoa kepada Tuhan setiap Minggu pagi.", "ما هر یکشنبه صبح به درگاه خدا دعا می‌کنیم.", "Ne rugăm lui Dumnezeu în fiecare duminică dimineața.", "Chúng tôi cầu nguyện với Chúa mỗi sáng Chủ nhật."),
    ("Dick Morgan called again this morning.", "اتصل ديك مورغان مجددا هذا الصباح.", "Dick Morgan menelepon lagi tadi pagi.", "دیک مورگان امروز صبح دوباره زنگ زد.", "Dick Morgan a sunat iar azi-dimineață.", "Sáng nay Dick Morgan lại gọi điện."),
    ("She goes to church with her grandmother.", "تذهب إلى الكنيسة مع جدتها.", "Dia pergi ke gereja bersama neneknya.", "با مادربزرگش می‌ره کلیسا.", "Merge la biserică cu bunica ei.", "Cô ấy đi nhà thờ cùng bà."),
]

#: Hearing-impaired stage directions (bracketed, all capitals in Latin scripts).
STAGE_ROWS: list[tuple[str, str, str, str, str, str]] = [
    ("[DOOR SLAMS]", "[صوت ارتطام الباب]", "[PINTU DIBANTING]", "[صدای کوبیده شدن در]", "[UȘA SE TRÂNTEȘTE]", "[TIẾNG ĐÓNG SẦM CỬA]"),
    ("(SIREN WAILING)", "(صوت صفارة إنذار)", "(SIRENE MERAUNG)", "(صدای آژیر)", "(SIRENA URLĂ)", "(TIẾNG CÒI HÚ)"),
]

#: Narrative lines with an e-mail address: kept by sanitization with the address redacted.
EMAIL_ROWS: list[tuple[str, str, str, str, str, str]] = [
    ("Send it to john.doe@example.com before noon.", "أرسلها إلى ahmed.karim@example.com قبل الظهر.", "Kirim ke budi.santoso@example.com sebelum jam dua belas.", "تا ظهر بفرستش به reza.ahmadi@example.com.", "Trimite-l la maria.ionescu@example.com până la prânz.", "Gửi nó đến minh.tran@example.com trước buổi trưa."),
    ("Her address was anna.berg@example.org, I swear.", "كان عنوانها anna.berg@example.org، أقسم لك.", "Alamatnya anna.berg@example.org, sumpah.", "آدرسش anna.berg@example.org بود، قسم می‌خورم.", "Adresa ei era anna.berg@example.org, jur.", "Địa chỉ của cô ấy là anna.berg@example.org, tôi thề."),
]
# fmt: on

#: Distribution artefacts (SPEC A6): (text, kind); kind in credit/promotion/url/social/contact.
BOILERPLATE: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("Subtitles by explosiveskull", "credit"),
        ("Synced and corrected by VitoSilans", "credit"),
        ("Support us and become VIP member\nto remove all ads from www.OpenSubtitles.org", "promotion"),
        ("Downloaded from\nYTS.MX", "promotion"),
        ("Follow us on Instagram @nightowl_subs", "social"),
        ("Email: nightowl.subs@example.com", "contact"),
        ("More movies at www.moviesubs-example.net", "url"),
    ],
    "ar": [
        ("ترجمة: أحمد سامي", "credit"),
        ("ترجمة وتعديل التوقيت\nفريق سينما العرب", "credit"),
        ("تابعونا على تيليجرام @cinema_arab_subs", "social"),
        ("للتواصل عبر البريد: subs.arab@example.com", "contact"),
        ("حمل أحدث الأفلام من www.arabseed-example.net", "url"),
        ("Support us and become VIP member\nto remove all ads from www.OpenSubtitles.org", "promotion"),
    ],
    "id": [
        ("Diterjemahkan oleh: Rudi Hartono", "credit"),
        ("Alih bahasa dan sinkronisasi:\nTim SubIndo", "credit"),
        ("Ikuti kami di Instagram @subindo.team", "social"),
        ("Email: subindo.team@example.com", "contact"),
        ("Nonton film terbaru di www.layarkaca-example.net", "url"),
        ("Downloaded from\nYTS.MX", "promotion"),
    ],
    "fa": [
        ("ترجمه و زیرنویس: علی رضایی", "credit"),
        ("زیرنویس از تیم فیلم‌باز", "credit"),
        ("کانال تلگرام ما: @filmbaz_subs", "social"),
        ("ایمیل: filmbaz.subs@example.com", "contact"),
        ("دانلود فیلم و سریال از www.film2movie-example.net", "url"),
        ("Support us and become VIP member\nto remove all ads from www.OpenSubtitles.org", "promotion"),
    ],
    "ro": [
        ("Traducerea și adaptarea: Andrei Popescu", "credit"),
        ("Subtitrare realizată de echipa SubsRo", "credit"),
        ("Urmăriți-ne pe Instagram @subsro.echipa", "social"),
        ("Email: contact.subsro@example.com", "contact"),
        ("Subtitrări noi pe www.subsro-example.net", "url"),
        ("Downloaded from\nYTS.MX", "promotion"),
    ],
    "vi": [
        ("Phụ đề bởi: Nhóm Phim Việt", "credit"),
        ("Biên dịch: Trần Minh Quân", "credit"),
        ("Theo dõi chúng tôi trên Telegram @phimviet_sub", "social"),
        ("Email: phimviet.sub@example.com", "contact"),
        ("Xem phim mới nhất tại www.phimmoi-example.net", "url"),
        ("Support us and become VIP member\nto remove all ads from www.OpenSubtitles.org", "promotion"),
    ],
}

#: Kids-in-Mind prose categories → SPEC A9 categories.
KIM_TO_A9: dict[str, str] = {
    "f_words": "strongProfanity",
    "scatological": "crudeBodilyLanguage",
    "anatomical": "crudeBodilyLanguage",
    "mild": "mildObscenity",
    "religious": "religiousProfanityAndExclamation",
}
A9_CATEGORIES: tuple[str, ...] = (
    "strongProfanity",
    "crudeBodilyLanguage",
    "mildObscenity",
    "religiousProfanityAndExclamation",
)


class Phrase:
    """One parallel row: text per language plus its kind and language-safety tags."""

    __slots__ = ("pid", "kind", "text", "tags")

    def __init__(self, pid: int, kind: str, row: tuple[str, ...], tags: dict[str, int] | None = None):
        self.pid = pid
        self.kind = kind  # dialogue | profanity | trap | stage | email
        self.text = {lang: unicodedata.normalize("NFC", t) for lang, t in zip(LANGS, row, strict=True)}
        self.tags = dict(tags or {})


def _build() -> list[Phrase]:
    out: list[Phrase] = []
    for row in DIALOGUE_ROWS:
        out.append(Phrase(len(out), "dialogue", row))
    for tags, row in PROFANITY_ROWS:
        out.append(Phrase(len(out), "profanity", row, tags))
    for row in TRAP_ROWS:
        out.append(Phrase(len(out), "trap", row))
    for row in STAGE_ROWS:
        out.append(Phrase(len(out), "stage", row))
    for row in EMAIL_ROWS:
        out.append(Phrase(len(out), "email", row))
    return out


PHRASES: list[Phrase] = _build()
DIALOGUE_IDS: list[int] = [p.pid for p in PHRASES if p.kind == "dialogue"]
TRAP_IDS: list[int] = [p.pid for p in PHRASES if p.kind == "trap"]
STAGE_IDS: list[int] = [p.pid for p in PHRASES if p.kind == "stage"]
EMAIL_IDS: list[int] = [p.pid for p in PHRASES if p.kind == "email"]
PROFANITY_IDS: dict[str, list[int]] = {}
for _p in PHRASES:
    for _cat in _p.tags:
        PROFANITY_IDS.setdefault(_cat, []).append(_p.pid)


def bank(lang: str) -> list[str]:
    """The natural-language sentences of one language (dialogue, profanity and trap rows)."""
    return [p.text[lang] for p in PHRASES if p.kind in ("dialogue", "profanity", "trap")]
